from django.urls import path
from rest_framework.routers import DefaultRouter

from accounts.api import AccountViewSet
from core.api import ApiTokenViewSet, AuditEntryViewSet, InviteViewSet, NotificationViewSet, PersonViewSet
from core.security import obtain_auth_token
from ingestion.api import (
    CatalogAuditViewSet,
    CatalogRebuildView,
    ChannelViewSet,
    DestinationView,
    IngestionRunViewSet,
    IngestionTriggerView,
    OnboardingViewSet,
    SkippedPackageViewSet,
    TopicViewSet,
)
from operations.api import MetricsView
from packages.api import CollectionViewSet, PackageFileLinkView, PackageSendViewSet, PackageViewSet
from packages.bot.api import BotAdminView, BotPersonViewSet, BotSettingsView
from reminders.api import AudienceViewSet, MediaFileViewSet, ReminderRunViewSet, ReminderViewSet

router = DefaultRouter()
router.register("accounts", AccountViewSet, basename="account")
router.register("notifications", NotificationViewSet, basename="notification")
router.register("channels/onboarding", OnboardingViewSet, basename="onboarding")
router.register("audit", AuditEntryViewSet, basename="audit-entry")
router.register("people", PersonViewSet, basename="person")
router.register("invites", InviteViewSet, basename="invite")
router.register("tokens", ApiTokenViewSet, basename="api-token-item")
router.register("channels", ChannelViewSet, basename="channel")
router.register("topics", TopicViewSet, basename="topic")
router.register("ingestion-runs", IngestionRunViewSet, basename="ingestion-run")
router.register("packages", PackageViewSet, basename="package")
router.register("package-sends", PackageSendViewSet, basename="package-send")
router.register("collections", CollectionViewSet, basename="collection")
router.register("bot/people", BotPersonViewSet, basename="bot-person")
router.register("skipped-packages", SkippedPackageViewSet, basename="skipped-package")
router.register("catalog-audits", CatalogAuditViewSet, basename="catalog-audit")
router.register("reminders", ReminderViewSet, basename="reminder")
router.register("reminder-runs", ReminderRunViewSet, basename="reminder-run")
router.register("media", MediaFileViewSet, basename="media")
router.register("audiences", AudienceViewSet, basename="audience")

urlpatterns = [
    path("auth/token/", obtain_auth_token, name="api-token"),
    path("metrics/", MetricsView.as_view(), name="api-metrics"),
    path("destination/", DestinationView.as_view(), name="api-destination"),
    path("ingestion/trigger/", IngestionTriggerView.as_view(), name="api-ingestion-trigger"),
    path("catalog/rebuild/", CatalogRebuildView.as_view(), name="api-catalog-rebuild"),
    path("bot/", BotSettingsView.as_view(), name="api-bot"),
    path("bot/admin/", BotAdminView.as_view(), name="api-bot-admin"),
    path("packages/<int:pk>/files/<int:file_id>/link/", PackageFileLinkView.as_view(), name="api-package-file-link"),
    *router.urls,
]

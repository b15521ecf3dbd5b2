from django.urls import path
from rest_framework.authtoken.views import obtain_auth_token
from rest_framework.routers import DefaultRouter

from accounts.api import AccountViewSet
from ingestion.api import (
    ChannelViewSet,
    DestinationView,
    IngestionRunViewSet,
    IngestionTriggerView,
    SkippedPackageViewSet,
    TopicViewSet,
)
from packages.api import PackageViewSet

router = DefaultRouter()
router.register("accounts", AccountViewSet, basename="account")
router.register("channels", ChannelViewSet, basename="channel")
router.register("topics", TopicViewSet, basename="topic")
router.register("ingestion-runs", IngestionRunViewSet, basename="ingestion-run")
router.register("packages", PackageViewSet, basename="package")
router.register("skipped-packages", SkippedPackageViewSet, basename="skipped-package")

urlpatterns = [
    path("auth/token/", obtain_auth_token, name="api-token"),
    path("destination/", DestinationView.as_view(), name="api-destination"),
    path("ingestion/trigger/", IngestionTriggerView.as_view(), name="api-ingestion-trigger"),
    *router.urls,
]

from django.urls import path

from ingestion import views

app_name = "ingestion"

urlpatterns = [
    path("channels/", views.channel_list, name="channels"),
    path("channels/join/preview/", views.channel_join_preview, name="channel-join-preview"),
    path("channels/join/", views.channel_join, name="channel-join"),
    path("channels/join-sources/", views.channels_join_sources, name="channels-join-sources"),
    path("channels/create-destination/", views.destination_create, name="destination-create"),
    path("channels/<int:pk>/", views.channel_detail, name="channel-detail"),
    path("channels/<int:pk>/leave/", views.channel_leave, name="channel-leave"),
    path("channels/<int:pk>/active/", views.channel_set_active, name="channel-active"),
    path("channels/<int:pk>/settings/", views.channel_settings, name="channel-settings"),
    path("channels/<int:pk>/rules/", views.channel_rules, name="channel-rules"),
    path("channels/<int:pk>/readers/", views.channel_add_reader, name="channel-add-reader"),
    path(
        "channels/<int:pk>/readers/<int:account_pk>/remove/",
        views.channel_remove_reader,
        name="channel-remove-reader",
    ),
    path("channels/<int:pk>/destination/", views.channel_make_destination, name="channel-destination"),
    path("channels/<int:pk>/ingest-now/", views.channel_ingest_now, name="channel-ingest-now"),
    path("channels/<int:pk>/passwords/", views.channel_password_add, name="channel-password-add"),
    path(
        "channels/<int:pk>/passwords/<int:password_pk>/remove/",
        views.channel_password_remove,
        name="channel-password-remove",
    ),
    path("channels/<int:pk>/topics/<int:topic_pk>/fetch/", views.channel_topic_fetch, name="channel-topic-fetch"),
    path("ingestion/runs/", views.run_list, name="runs"),
    path("ingestion/runs/ingest-now/", views.runs_ingest_now, name="runs-ingest-now"),
    path("ingestion/runs/<int:pk>/", views.run_detail, name="run-detail"),
    path("ingestion/runs/<int:pk>/row/", views.run_row, name="runs-row"),
    path("catalog/audit/", views.catalog_audit_now, name="catalog-audit"),
    path("catalog/rebuild/", views.catalog_rebuild_now, name="catalog-rebuild"),
    path("catalog/audits/<int:pk>/repair-missing/", views.catalog_repair_missing, name="catalog-repair-missing"),
    path("skipped/", views.skipped_list, name="skipped"),
    path("skipped/retry-all/", views.skipped_retry_all, name="skipped-retry-all"),
    path("skipped/<int:pk>/retry/", views.skipped_retry, name="skipped-retry"),
]

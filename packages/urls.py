from django.urls import path

from packages import views
from packages.views import downloads as download_views
from packages.views import files as file_views

app_name = "packages"

urlpatterns = [
    path("", views.package_list, name="list"),
    path("bulk-edit/", views.package_bulk_edit, name="bulk-edit"),
    path("<int:pk>/", views.package_detail, name="detail"),
    path("<int:pk>/send/", views.package_send, name="send"),
    path("<int:pk>/send/preview/", views.package_send_preview, name="send-preview"),
    path("<int:pk>/sends/", views.package_sends, name="sends"),
    path("sends/<int:pk>/retry/", views.package_send_retry, name="send-retry"),
    path("<int:pk>/preview/", views.preview_choose, name="preview-choose"),
    path("<int:pk>/previews/<int:preview_pk>.jpg", views.preview_image, name="preview-image"),
    path("<int:pk>/collection/", views.package_collect, name="collect"),
    path("collections/", views.collection_list, name="collections"),
    path("collections/<int:pk>/", views.collection_detail, name="collection"),
    path("collections/<int:pk>/edit/", views.collection_edit, name="collection-edit"),
    path("collections/<int:pk>/send/", views.collection_send, name="collection-send"),
    path("collections/<int:pk>/send/preview/", views.collection_send_preview, name="collection-send-preview"),
    path("collections/<int:pk>/sends/", views.collection_sends, name="collection-sends"),
    path("<int:pk>/edit/", views.package_edit, name="edit"),
    path("<int:pk>/repack/", views.package_repack_decide, name="repack-decide"),
    path("<int:pk>/download-links/", views.package_download_links, name="download-links"),
    path("download/<str:token>/<str:name>", download_views.download, name="download"),
    path("<int:pk>/files/<int:file_pk>/get", file_views.package_file_get, name="file-get"),
    path("file/<str:token>/<str:name>", file_views.package_file, name="file"),
]

from django.urls import path

from packages import views

app_name = "packages"

urlpatterns = [
    path("", views.package_list, name="list"),
    path("bulk-edit/", views.package_bulk_edit, name="bulk-edit"),
    path("<int:pk>/", views.package_detail, name="detail"),
    path("<int:pk>/edit/", views.package_edit, name="edit"),
    path("<int:pk>/repack/", views.package_repack_decide, name="repack-decide"),
]

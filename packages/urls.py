from django.urls import path

from packages import views

app_name = "packages"

urlpatterns = [
    path("", views.package_list, name="list"),
    path("<int:pk>/", views.package_detail, name="detail"),
    path("<int:pk>/send/", views.package_send, name="send"),
    path("<int:pk>/sends/", views.package_sends, name="sends"),
    path("sends/<int:pk>/retry/", views.package_send_retry, name="send-retry"),
]

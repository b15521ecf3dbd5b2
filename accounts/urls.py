from django.urls import path

from accounts import views

app_name = "accounts"

urlpatterns = [
    path("", views.account_list, name="list"),
    path("add/", views.account_add, name="add"),
    path("logins/unlock/", views.login_unlock, name="login-unlock"),
    path("<int:pk>/send-code/", views.account_send_code, name="send-code"),
    path("<int:pk>/code/", views.account_code, name="code"),
    path("<int:pk>/password/", views.account_password, name="password"),
    path("<int:pk>/refresh-chats/", views.account_refresh_chats, name="refresh-chats"),
    path("<int:pk>/active/", views.account_set_active, name="active"),
    path("<int:pk>/delete/", views.account_delete, name="delete"),
    path("<int:pk>/sending/", views.account_sending, name="sending"),
    path("<int:pk>/ingest-limits/", views.account_ingest_limits, name="ingest-limits"),
    path("<int:pk>/rest/end/", views.account_rest_end, name="rest-end"),
    path("<int:pk>/rest/keep-runs-paused/", views.account_rest_keep_paused, name="rest-keep-paused"),
]

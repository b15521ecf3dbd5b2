from django.contrib.auth import views as auth_views
from django.urls import path, re_path

from core import flower, views

urlpatterns = [
    path(
        "login/",
        auth_views.LoginView.as_view(template_name="core/login.html", redirect_authenticated_user=True),
        name="login",
    ),
    path("logout/", views.LogoutView.as_view(), name="logout"),
    path("audit/", views.audit_list, name="audit"),
    path("people/", views.people_list, name="people"),
    path("people/add/", views.person_add, name="people-add"),
    path("people/<int:pk>/role/", views.person_role, name="people-role"),
    path("people/<int:pk>/deactivate/", views.person_deactivate, name="people-deactivate"),
    path("people/<int:pk>/reactivate/", views.person_reactivate, name="people-reactivate"),
    path("people/<int:pk>/password/", views.person_password, name="people-password"),
    path("people/invites/<int:pk>/revoke/", views.invite_revoke, name="people-invite-revoke"),
    path("invite/<str:token>/", views.invite_accept, name="invite"),
    path("tokens/", views.token_list, name="tokens"),
    path("tokens/new/", views.token_create, name="tokens-create"),
    path("tokens/<int:pk>/revoke/", views.token_revoke, name="tokens-revoke"),
    path("notifications/", views.notification_list, name="notifications"),
    path("notifications/bell/", views.notification_bell, name="notifications-bell"),
    path("notifications/panel/", views.notification_panel, name="notifications-panel"),
    path("notifications/read-all/", views.notifications_read_all, name="notifications-mark-all-read"),
    path("notifications/<int:pk>/read/", views.notification_read, name="notifications-mark-read"),
    # Flower, for operators, through the console's login (core/flower.py).
    path("flower/tasks/datatable", flower.flower_read_post, name="flower-task-table"),
    re_path(r"^flower/(?P<path>.*)$", flower.flower_proxy, name="flower"),
]

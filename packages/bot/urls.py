from django.urls import path

from packages.bot import views

app_name = "bot"
urlpatterns = [
    path("", views.bot_page, name="page"),
    path("settings/", views.bot_settings, name="settings"),
    path("admin/", views.bot_make_admin, name="make-admin"),
    path("people/<int:user_id>/block/", views.bot_person_block, name="person-block"),
]

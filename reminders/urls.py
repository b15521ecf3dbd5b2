from django.urls import path

from reminders import views
from reminders.views import audiences as audience_views
from reminders.views import runs as run_views

app_name = "reminders"

urlpatterns = [
    path("reminders/", views.reminder_list, name="list"),
    path("reminders/new/", views.reminder_compose, name="compose"),
    path("reminders/eta/", views.reminder_eta, name="eta"),
    path("reminders/part-preview/", views.reminder_part_preview, name="part-preview"),
    path("reminders/<int:pk>/", views.reminder_detail, name="detail"),
    path("reminders/<int:pk>/edit/message/", views.reminder_edit, {"section": "message"}, name="edit-message"),
    path("reminders/<int:pk>/edit/groups/", views.reminder_edit, {"section": "groups"}, name="edit-groups"),
    path("reminders/<int:pk>/edit/when/", views.reminder_edit, {"section": "when"}, name="edit-when"),
    path("reminders/<int:pk>/enabled/", views.reminder_set_enabled, name="enabled"),
    path("reminders/<int:pk>/send-now/", views.reminder_send_now, name="send-now"),
    path("reminders/<int:pk>/test-send/", views.reminder_test_send, name="test-send"),
    path("reminders/<int:pk>/delete/", views.reminder_delete, name="delete"),
    path("reminders/audiences/", audience_views.audience_list, name="audiences"),
    path("reminders/audiences/new/", audience_views.audience_edit, name="audience-new"),
    path("reminders/audiences/preview/", audience_views.audience_preview, name="audience-preview"),
    path("reminders/audiences/import/", audience_views.audience_import, name="audience-import"),
    path("reminders/audiences/<int:pk>/", audience_views.audience_edit, name="audience"),
    path("reminders/audiences/<int:pk>/delete/", audience_views.audience_delete, name="audience-delete"),
    path("activity/", run_views.activity, name="activity"),
    path("activity/runs/<int:pk>/", run_views.run_detail, name="activity-run"),
    path("activity/runs/<int:pk>/row/", run_views.run_row, name="activity-run-row"),
    path("activity/runs/<int:pk>/report.csv", run_views.run_report, name="activity-run-report"),
    path("activity/runs/<int:pk>/panel/", run_views.run_panel, name="activity-run-panel"),
    path("activity/runs/<int:pk>/pause/", run_views.run_pause, name="activity-pause"),
    path("activity/runs/<int:pk>/resume/", run_views.run_resume, name="activity-resume"),
    path("activity/runs/<int:pk>/move/", run_views.run_move, name="activity-move"),
    path("activity/runs/<int:pk>/cancel/", run_views.run_cancel, name="activity-cancel"),
    path("activity/runs/<int:pk>/retry-failed/", run_views.run_retry_failed, name="activity-retry-failed"),
]

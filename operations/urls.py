from django.urls import path

from operations import views

# Not namespaced: the names ("dashboard", "operations", "metrics-prometheus", "healthz") are the ones
# core.urls had before the operations app took them over.
urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("operations/", views.operations, name="operations"),
    path("attention/reminder-runs/<int:pk>/resume/", views.attention_run_resume, name="attention-run-resume"),
    path("attention/reminder-runs/<int:pk>/cancel/", views.attention_run_cancel, name="attention-run-cancel"),
    path("attention/stuck-runs/requeue/", views.attention_runs_requeue, name="attention-runs-requeue"),
    # For machines: Prometheus (login or token) and health checks (no login).
    path("metrics", views.prometheus_metrics, name="metrics-prometheus"),
    path("healthz", views.healthz, name="healthz"),
]

from django.urls import path

from operations import views

# Not namespaced: the names ("dashboard", "operations", "metrics-prometheus", "healthz") are the ones
# core.urls had before the operations app took them over.
urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("operations/", views.operations, name="operations"),
    # For machines: Prometheus (login or token) and health checks (no login).
    path("metrics", views.prometheus_metrics, name="metrics-prometheus"),
    path("healthz", views.healthz, name="healthz"),
]

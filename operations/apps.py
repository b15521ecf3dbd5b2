from django.apps import AppConfig


class OperationsConfig(AppConfig):
    """The dashboard, metrics, health and alerts: reads every app, and no app imports it."""

    name = "operations"
    verbose_name = "Operations"

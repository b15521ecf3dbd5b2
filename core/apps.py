from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "Core"

    def ready(self):
        from core.api import api_error_status_register
        from core.crypto import SealBroken

        api_error_status_register(SealBroken, 409)  # the session key changed: log the account in again

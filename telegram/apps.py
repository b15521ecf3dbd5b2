from django.apps import AppConfig


class TelegramConfig(AppConfig):
    name = "telegram"

    def ready(self):
        from core.api import api_error_status_register
        from telegram import errors

        # What an API client can do about each: retry later (502/503), wait (429), change the order or log in
        # again (409), fix the input (400).
        for kind, status_code in (
            (errors.TelegramError, 502),
            (errors.TransientError, 503),
            (errors.AuthRequired, 409),
            (errors.AccountRestricted, 409),
            (errors.FloodWait, 429),
            (errors.LimitReached, 409),
            (errors.LoginError, 400),
        ):
            api_error_status_register(kind, status_code)

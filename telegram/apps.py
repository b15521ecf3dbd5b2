from django.apps import AppConfig


class TelegramConfig(AppConfig):
    name = "telegram"

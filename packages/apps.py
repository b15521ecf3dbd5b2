from django.apps import AppConfig


class PackagesConfig(AppConfig):
    name = "packages"

from django.apps import AppConfig


class ClaimtestConfig(AppConfig):
    name = "tests.claimtest"
    label = "claimtest"

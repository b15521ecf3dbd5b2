from django.apps import AppConfig


class IngestionConfig(AppConfig):
    name = "ingestion"

    def ready(self):
        from accounts.signals import chats_refreshed
        from core.runs import run_kind_register
        from ingestion.models import IngestionRun
        from ingestion.services import channels_for_known_chats, ingestion_run_enqueue

        run_kind_register(model=IngestionRun, enqueue=ingestion_run_enqueue)
        # Pages and the API only read channels: they are made when an account's chats are stored.
        chats_refreshed.connect(
            lambda **kwargs: channels_for_known_chats(), weak=False, dispatch_uid="ingestion.channels_for_known_chats"
        )

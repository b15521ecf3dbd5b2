from django.apps import AppConfig


class IngestionConfig(AppConfig):
    name = "ingestion"

    def ready(self):
        from core.runs import run_kind_register
        from ingestion.models import IngestionRun
        from ingestion.services import ingestion_run_enqueue

        run_kind_register(model=IngestionRun, enqueue=ingestion_run_enqueue)

"""The ingestion API, one module per resource: channels (with their rules and passwords actions), topics, the
destination, onboarding (join, leave, create), runs, skipped packages and the catalog. The URLs wire these."""

from ingestion.api.catalog import CatalogAuditViewSet, CatalogRebuildView
from ingestion.api.channels import ChannelViewSet
from ingestion.api.destination import DestinationView
from ingestion.api.onboarding import OnboardingViewSet
from ingestion.api.runs import IngestionRunViewSet, IngestionTriggerView
from ingestion.api.skipped import SkippedPackageViewSet
from ingestion.api.topics import TopicViewSet

__all__ = [
    "CatalogAuditViewSet",
    "CatalogRebuildView",
    "ChannelViewSet",
    "DestinationView",
    "IngestionRunViewSet",
    "IngestionTriggerView",
    "OnboardingViewSet",
    "SkippedPackageViewSet",
    "TopicViewSet",
]

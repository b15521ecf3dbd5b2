from core.models import ClaimableRun


class ProbeRun(ClaimableRun):
    """A concrete run for testing the claim services on their own."""

    class Meta:
        app_label = "claimtest"

    def __str__(self) -> str:
        return f"probe run {self.pk}"

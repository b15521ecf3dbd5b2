"""What a run came to, in one vocabulary for every kind of run (ingestion runs, reminder runs, package sends), on
every page and in the API.

A run's stored `status` says where it is in its life (queued, running, paused, over); its outcome says what it
did, in the operator's words: success, partial (some of its own work failed), failed, canceled (the operator
ended it), paused, waiting, running, or "did nothing: <why>". Each kind of run decides its outcome from its own
row (`outcome` on its model); this module holds the words and the colours, once.
"""

from dataclasses import dataclass

from django.db import models


class Outcome(models.TextChoices):
    WAITING = "waiting", "Waiting"
    RUNNING = "running", "Running"
    PAUSED = "paused", "Paused"
    SUCCESS = "success", "Success"
    PARTIAL = "partial", "Partial"
    FAILED = "failed", "Failed"
    CANCELED = "canceled", "Canceled"
    IDLE = "idle", "Did nothing"


@dataclass(frozen=True)
class RunOutcome:
    """An outcome and why, when the why is worth saying ("Did nothing: Reader A is busy in another process")."""

    key: str
    why: str = ""

    @property
    def label(self) -> str:
        return Outcome(self.key).label

    @property
    def text(self) -> str:
        return f"{self.label}: {self.why}" if self.why else self.label


def first_sentence(text: str) -> str:
    """The reason a run stored, short enough for a badge's line: its first sentence, without the final stop."""
    head = text.strip().split(". ", 1)[0].strip()
    return head[:-1] if head.endswith(".") else head


def outcome_pills(counts: dict[str, int]) -> list[dict]:
    """A list page's filters, one per outcome its kind of run can come to (`counts`, in Outcome's order)."""
    return [{"key": key, "label": label, "count": counts[key]} for key, label in Outcome.choices if key in counts]

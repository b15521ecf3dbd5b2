"""What a run came to, in the API: the fields every run's serializer shares."""

from rest_framework import serializers

from core.outcomes import Outcome


class OutcomeFields(serializers.Serializer):
    """What a run came to (core.outcomes), beside its `status`: the same words for every kind of run."""

    outcome = serializers.ChoiceField(
        source="outcome.key",
        choices=Outcome.choices,
        read_only=True,
        help_text="What the run came to: waiting, running, paused, success, partial (some of its own work failed), "
        "failed, canceled (ended by an operator), or idle (did nothing; outcome_text says why).",
    )
    outcome_text = serializers.CharField(
        source="outcome.text", read_only=True, help_text="The outcome in words, as the pages say it."
    )

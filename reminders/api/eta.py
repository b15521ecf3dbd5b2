"""The ETA pill's question and answer: how long a fan-out takes, and whether it fits in its window."""

from rest_framework import serializers
from rest_framework.exceptions import ValidationError

from accounts.models import TelegramAccount
from core import clock
from reminders.schedule import HORIZON_TEXT, window_hours_errors, within_horizon, zone

# Far above any real fan-out (an account is in at most a few thousand chats), far below an overflow.
ETA_MAX_TARGETS = 1_000_000
ETA_MAX_PARTS = 1_000


class EtaInSerializer(serializers.Serializer):
    targets = serializers.IntegerField(min_value=0, max_value=ETA_MAX_TARGETS, help_text="How many groups.")
    parts = serializers.IntegerField(min_value=0, max_value=ETA_MAX_PARTS, help_text="Parts per group.")
    fire_at = serializers.DateTimeField(required=False, help_text="When it would fire; now when omitted.")
    timezone = serializers.CharField(max_length=64)
    window_start_hour = serializers.IntegerField(min_value=0, max_value=23)
    window_end_hour = serializers.IntegerField(min_value=1, max_value=24)
    account = serializers.PrimaryKeyRelatedField(
        queryset=TelegramAccount.objects.all(), required=False, help_text="Adds the rate it actually achieved."
    )

    def validate_timezone(self, value):
        try:
            zone(value)
        except ValueError as exc:
            raise ValidationError(str(exc)) from None
        return value

    def validate_fire_at(self, value):
        if not within_horizon(value, clock.now()):
            raise ValidationError(f"Give a moment within {HORIZON_TEXT} of now.")
        return value

    def validate(self, attrs):
        errors = window_hours_errors(attrs["window_start_hour"], attrs["window_end_hour"])
        if errors:
            raise ValidationError(errors)
        return attrs


class EtaSerializer(serializers.Serializer):
    duration_minutes = serializers.IntegerField()
    fire_at = serializers.DateTimeField()
    starts_at = serializers.DateTimeField(
        help_text="fire_at inside the window; outside it, when the window next opens (the run waits until then)."
    )
    finishes_at = serializers.DateTimeField()
    window_end_at = serializers.DateTimeField(
        allow_null=True, help_text="The end of the window it sends in; null for an all-day window (00:00–24:00)."
    )
    fits = serializers.BooleanField()
    label = serializers.CharField(help_text="The pill's text.")
    rate_per_minute = serializers.IntegerField(help_text="The configured pace the estimate uses.")
    observed_rate_per_minute = serializers.FloatField(
        allow_null=True, help_text="What the account achieved over its last runs; null before any."
    )

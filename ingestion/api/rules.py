"""What a channel takes: its rules as the API reads them, and the actions that try rules without saving them
(what the last documents would give, what the whole history holds)."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.response import Response

from ingestion import services
from ingestion.api.shared import BAD_REQUEST, CONFLICT
from ingestion.models import (
    StartPoint,
)
from ingestion.rules import KINDS, NAME_PATTERN_MAX
from packages.models import RAW_FILE_MAX_RETENTION_DAYS

SIZE_HELP = '{which} set taken, in bytes or as a size like "500 MB" or "1.5 GB"; null or empty: no bound.'


class RulesSerializer(serializers.Serializer):
    """What the channel takes (docs/operations.md, "What each channel takes"); any field left out stays."""

    take_kinds = serializers.ListField(
        child=serializers.ChoiceField(choices=list(KINDS)),
        required=False,
        help_text="Kinds taken: zip, rar, 7z, model. Empty: every kind.",
    )
    take_multi_volume = serializers.BooleanField(required=False, help_text="Take sets of several volumes.")
    leave_extensions = serializers.ListField(
        child=serializers.CharField(max_length=12),
        required=False,
        help_text='File extensions left out, e.g. ["pdf", "gcode"].',
    )
    name_pattern = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=NAME_PATTERN_MAX,
        help_text="A regular expression a set's file name must contain (case-insensitive). Empty: any name.",
    )
    min_bytes = serializers.CharField(
        required=False, allow_null=True, allow_blank=True, help_text=SIZE_HELP.format(which="Smallest")
    )
    max_bytes = serializers.CharField(
        required=False, allow_null=True, allow_blank=True, help_text=SIZE_HELP.format(which="Largest")
    )
    start_from = serializers.ChoiceField(
        choices=StartPoint.choices,
        required=False,
        help_text="now: only what is posted from now on; date: since start_date; message: from the post of "
        "start_message_link on; history: everything. A start other than now rewinds the watermarks to it "
        "(what is already kept is recognised, not downloaded).",
    )
    start_date = serializers.DateTimeField(required=False, allow_null=True, help_text="With start_from=date.")
    start_message_link = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=300,
        help_text="With start_from=message: t.me/c/<id>/<msg>, t.me/<username>/<msg>, or a topic's "
        "t.me/c/<id>/<topic>/<msg>.",
    )


class ChannelUpdateSerializer(RulesSerializer):
    is_active = serializers.BooleanField(required=False, help_text="Scan this channel every cycle.")
    category = serializers.CharField(required=False, allow_blank=True, max_length=100)
    expiration_days = serializers.IntegerField(
        required=False,
        allow_null=True,
        max_value=RAW_FILE_MAX_RETENTION_DAYS,
        help_text="How long raw files are kept: null keeps them, 0 keeps 3 hours, N keeps N days "
        f"(at most {RAW_FILE_MAX_RETENTION_DAYS}).",
    )
    sets_per_cycle = serializers.IntegerField(
        required=False,
        allow_null=True,
        help_text="The channel's share of a cycle: at most this many sets, then the other channels have their turn "
        "and a backfill goes on in the next cycle (queued at once); null: INGEST_CHANNEL_SETS_PER_CYCLE.",
    )


class PreviewSetSerializer(serializers.Serializer):
    message_id = serializers.IntegerField()
    file_name = serializers.CharField()
    size = serializers.IntegerField()
    size_text = serializers.CharField(help_text='The size as the console writes it ("651.6 KB").')
    volumes = serializers.IntegerField()
    taken = serializers.BooleanField()
    left_out = serializers.CharField(help_text="Why the rules leave it out; empty when taken.")


class RulesPreviewSerializer(serializers.Serializer):
    account = serializers.CharField(help_text="The account that read the channel.")
    taken = serializers.IntegerField()
    sets = PreviewSetSerializer(many=True, help_text="The sets among the last 100 documents, newest first.")


class HistoryCountSerializer(serializers.Serializer):
    account = serializers.CharField(help_text="The account that read the channel.")
    sets = serializers.IntegerField(help_text="Archive sets and model files in the whole history.")
    bytes = serializers.IntegerField()
    taken_sets = serializers.IntegerField(help_text="Of these, what the rules take.")
    taken_bytes = serializers.IntegerField()


# The channel viewset's rules actions: /api/channels/{id}/rules-preview/ and history-count/.
# (A comment, not a docstring: the schema would take a docstring as every channel operation's description.)
class ChannelRulesActions:
    def _rules_tried(self, request):
        """The channel, and its rules as they would be with the request's values (not saved)."""
        channel = self.get_object()
        data = RulesSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        return channel, services.channel_rules_try(channel=channel, **data.validated_data)

    @extend_schema(
        summary="What the rules would take of the channel's last 100 documents (read from Telegram, nothing "
        "downloaded); rules given here are tried, not saved",
        request=RulesSerializer,
        responses={200: RulesPreviewSerializer, 400: BAD_REQUEST, 409: CONFLICT},
    )
    @action(detail=True, methods=["post"], url_path="rules-preview")
    def rules_preview(self, request, pk=None):
        channel, rules = self._rules_tried(request)
        preview = services.channel_rules_preview(channel=channel, rules=rules)
        sets = [{**vars(row), "size_text": row.size_text, "taken": not row.left_out} for row in preview.rows]
        return Response({"account": preview.account, "taken": preview.taken, "sets": sets})

    @extend_schema(
        summary="How many sets and bytes the channel's whole history holds, and how many the rules take "
        "(counted from its search results, nothing downloaded)",
        request=RulesSerializer,
        responses={200: HistoryCountSerializer, 400: BAD_REQUEST, 409: CONFLICT},
    )
    @action(detail=True, methods=["post"], url_path="history-count")
    def history_count(self, request, pk=None):
        channel, rules = self._rules_tried(request)
        return Response(vars(services.channel_history_count(channel=channel, rules=rules)))

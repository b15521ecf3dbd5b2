"""API for channels, forum topics, the destination, ingestion runs and skipped packages.

Why this size: one viewset per ingestion resource, each with its serializers and schema text beside it.
"""

from django.db import transaction
from django.db.models import Prefetch
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field, extend_schema_view
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.models import TelegramAccount
from core import task_names
from core.api import ErrorSerializer, OutcomeFields, idempotent
from core.errors import OperatorError
from core.models import RunStatus
from core.roles import is_operator
from ingestion import selectors, services
from ingestion.audit import catalog_audit_repair_missing
from ingestion.models import (
    RUN_OUTCOME_FILTERS,
    AccountChannelMap,
    CatalogAudit,
    Channel,
    ChannelScan,
    IngestionRun,
    IngestionTrigger,
    MapRole,
    SkippedPackage,
    SkipReason,
    StartPoint,
    TopicProgress,
)
from ingestion.rules import KINDS, NAME_PATTERN_MAX, RULE_FIELDS
from packages import services as package_services
from packages.models import RAW_FILE_MAX_RETENTION_DAYS, ChannelPassword
from packages.selectors import channel_passwords
from packages.services import MAX_PASSWORD_CHARS

BAD_REQUEST = OpenApiResponse(ErrorSerializer, description="Invalid input; `message` names the field.")
FORBIDDEN = OpenApiResponse(ErrorSerializer, description="Viewers may not do this.")
CONFLICT = OpenApiResponse(ErrorSerializer, description="No account can read the channel now; `message` says why.")
SIZE_HELP = '{which} set taken, in bytes or as a size like "500 MB" or "1.5 GB"; null or empty: no bound.'


# Channels -------------------------------------------------------------------------------------------------


class ScanStateSerializer(serializers.ModelSerializer):
    """What one reading account knows of a channel: watermark and scan state."""

    in_backoff = serializers.BooleanField(read_only=True, help_text="Idle long enough to be checked every Nth cycle.")

    class Meta:
        model = AccountChannelMap
        fields = [
            "account",
            "last_processed_message_id",
            "scanned_through_message_id",
            "last_scanned_at",
            "last_scan_found_archives",
            "consecutive_empty_scans",
            "in_backoff",
        ]
        read_only_fields = fields


class ChannelSerializer(serializers.ModelSerializer):
    telegram_id = serializers.IntegerField(source="chat.telegram_id", read_only=True)
    title = serializers.CharField(source="chat.title", read_only=True)
    type = serializers.CharField(source="chat.type", read_only=True)
    is_forum = serializers.BooleanField(source="chat.is_forum", read_only=True)
    readers = serializers.SerializerMethodField(help_text="Ids of the accounts that scan this channel.")
    writers = serializers.SerializerMethodField(help_text="Ids of the accounts that upload here (destination).")
    skipped_count = serializers.IntegerField(read_only=True)
    share = serializers.IntegerField(
        read_only=True, help_text="Sets it takes in one cycle: sets_per_cycle, or INGEST_CHANNEL_SETS_PER_CYCLE."
    )
    scan_state = serializers.SerializerMethodField(help_text="Per reading account: watermark and scan state.")

    class Meta:
        model = Channel
        fields = [
            "id",
            "telegram_id",
            "title",
            "type",
            "is_forum",
            "is_active",
            "is_destination",
            "category",
            "expiration_days",
            *RULE_FIELDS,
            "sets_per_cycle",
            "share",
            "readers",
            "writers",
            "skipped_count",
            "scan_state",
            "last_error",
            "created_at",
        ]
        read_only_fields = fields

    @extend_schema_field(ScanStateSerializer(many=True))
    def get_scan_state(self, channel: Channel) -> list[dict]:
        return ScanStateSerializer([m for m in channel.maps.all() if m.role == MapRole.READER], many=True).data

    @extend_schema_field(serializers.ListField(child=serializers.IntegerField()))
    def get_readers(self, channel: Channel) -> list[int]:
        return [m.account_id for m in channel.maps.all() if m.role == MapRole.READER]

    @extend_schema_field(serializers.ListField(child=serializers.IntegerField()))
    def get_writers(self, channel: Channel) -> list[int]:
        return [m.account_id for m in channel.maps.all() if m.role == MapRole.WRITER]


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


class ReaderSerializer(serializers.Serializer):
    account = serializers.PrimaryKeyRelatedField(
        queryset=TelegramAccount.objects.all(), help_text="The account's id in /api/accounts/."
    )


class LeaveSerializer(serializers.Serializer):
    account = serializers.PrimaryKeyRelatedField(
        queryset=TelegramAccount.objects.all(), help_text="The account that leaves, its id in /api/accounts/."
    )


class LeftSerializer(serializers.Serializer):
    left_on_telegram = serializers.BooleanField(help_text="False: the account was not in it on Telegram any more.")
    channel = ChannelSerializer()


class ChannelFilterSerializer(serializers.Serializer):
    is_active = serializers.BooleanField(required=False, allow_null=True, default=None)


class ChannelPasswordSerializer(serializers.ModelSerializer):
    hint = serializers.CharField(read_only=True, help_text="Its first and last characters and its length, never more.")

    class Meta:
        model = ChannelPassword
        fields = ["id", "hint", "created_at"]
        read_only_fields = fields


class ChannelPasswordInSerializer(serializers.Serializer):
    password = serializers.CharField(
        max_length=MAX_PASSWORD_CHARS, trim_whitespace=True, help_text="Kept sealed; never shown again."
    )


def _operators_only(request) -> None:
    if not is_operator(request.user):
        raise PermissionDenied("Only operators see or change a channel's archive passwords.")


@extend_schema_view(
    list=extend_schema(
        summary="List channels and supergroups the accounts are in", parameters=[ChannelFilterSerializer]
    ),
    retrieve=extend_schema(summary="One channel"),
)
class ChannelViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    serializer_class = ChannelSerializer

    def get_queryset(self):
        channels = selectors.channel_list()
        if self.action == "list":
            filters = ChannelFilterSerializer(data=self.request.query_params)
            filters.is_valid(raise_exception=True)
            if filters.validated_data["is_active"] is not None:
                channels = channels.filter(is_active=filters.validated_data["is_active"])
        return channels

    @extend_schema(
        summary="Change whether a channel is scanned, its category, its raw-file retention or its share of a cycle",
        request=ChannelUpdateSerializer,
        responses={200: ChannelSerializer, 400: BAD_REQUEST},
    )
    def partial_update(self, request, pk=None):
        channel = self.get_object()
        data = ChannelUpdateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        given = data.validated_data
        rules = {name: given.pop(name) for name in RulesSerializer().fields if name in given}
        with transaction.atomic():
            if rules:
                services.channel_rules_update(channel=channel, **rules)
            services.channel_update(channel=channel, **given)
        return Response(ChannelSerializer(selectors.channel_get(pk=channel.pk)).data)

    @extend_schema(
        methods=["GET"],
        summary="A channel's archive passwords (operators only): hints, never the passwords",
        responses={200: ChannelPasswordSerializer(many=True), 403: FORBIDDEN},
    )
    @extend_schema(
        methods=["POST"],
        summary="Add an archive password to a channel (operators only); tried on its archives that need one",
        request=ChannelPasswordInSerializer,
        responses={201: ChannelPasswordSerializer, 400: BAD_REQUEST, 403: FORBIDDEN},
    )
    @action(detail=True, methods=["get", "post"])
    def passwords(self, request, pk=None):
        _operators_only(request)
        channel = self.get_object()
        if request.method == "GET":
            return Response(ChannelPasswordSerializer(channel_passwords(chat_id=channel.chat_id), many=True).data)
        data = ChannelPasswordInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        added = package_services.channel_password_add(chat_id=channel.chat_id, password=data.validated_data["password"])
        return Response(ChannelPasswordSerializer(added).data, status=201)

    @extend_schema(
        summary="Remove one of a channel's archive passwords (operators only)",
        request=None,
        responses={204: None, 400: BAD_REQUEST, 403: FORBIDDEN},
    )
    @action(detail=True, methods=["delete"], url_path=r"passwords/(?P<password_id>\d+)")
    def password_remove(self, request, pk=None, password_id=None):
        _operators_only(request)
        channel = self.get_object()
        package_services.channel_password_remove(chat_id=channel.chat_id, password_id=int(password_id))
        return Response(status=204)

    @extend_schema(
        summary="What the rules would take of the channel's last 100 documents (read from Telegram, nothing "
        "downloaded); rules given here are tried, not saved",
        request=RulesSerializer,
        responses={200: RulesPreviewSerializer, 400: BAD_REQUEST, 409: CONFLICT},
    )
    @action(detail=True, methods=["post"], url_path="rules-preview")
    def rules_preview(self, request, pk=None):
        channel = self.get_object()
        data = RulesSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        rules = services.channel_rules_try(channel=channel, **data.validated_data)
        preview = services.channel_rules_preview(channel=channel, rules=rules)
        sets = [{**vars(row), "taken": not row.left_out} for row in preview.rows]
        return Response({"account": preview.account, "taken": preview.taken, "sets": sets})

    @extend_schema(
        summary="How many sets and bytes the channel's whole history holds, and how many the rules take "
        "(counted from its search results, nothing downloaded)",
        request=RulesSerializer,
        responses={200: HistoryCountSerializer, 400: BAD_REQUEST, 409: CONFLICT},
    )
    @action(detail=True, methods=["post"], url_path="history-count")
    def history_count(self, request, pk=None):
        channel = self.get_object()
        data = RulesSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        rules = services.channel_rules_try(channel=channel, **data.validated_data)
        return Response(vars(services.channel_history_count(channel=channel, rules=rules)))

    @extend_schema(
        summary="Let an account read this channel (it must be a member)",
        request=ReaderSerializer,
        responses={200: ChannelSerializer, 400: BAD_REQUEST},
    )
    @action(detail=True, methods=["post"])
    def readers(self, request, pk=None):
        channel = self.get_object()
        data = ReaderSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.channel_link_account(channel=channel, account=data.validated_data["account"])
        return Response(ChannelSerializer(selectors.channel_get(pk=channel.pk)).data)

    @extend_schema(
        summary="Stop an account reading this channel",
        request=ReaderSerializer,
        responses={200: ChannelSerializer, 400: BAD_REQUEST},
    )
    @extend_schema(
        summary="An account leaves this channel on Telegram and stops reading it here",
        request=LeaveSerializer,
        responses={200: LeftSerializer, 400: BAD_REQUEST},
    )
    @action(detail=True, methods=["post"])
    def leave(self, request, pk=None):
        channel = self.get_object()
        data = LeaveSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        left = services.channel_leave(channel=channel, account=data.validated_data["account"])
        return Response(
            LeftSerializer({"left_on_telegram": left, "channel": selectors.channel_get(pk=channel.pk)}).data
        )

    @action(detail=True, methods=["post"], url_path="readers/remove")
    def readers_remove(self, request, pk=None):
        channel = self.get_object()
        data = ReaderSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.channel_unlink_account(channel=channel, account=data.validated_data["account"])
        return Response(ChannelSerializer(selectors.channel_get(pk=channel.pk)).data)


# Topics ---------------------------------------------------------------------------------------------------


class TopicSerializer(serializers.ModelSerializer):
    in_backoff = serializers.BooleanField(read_only=True, help_text="Idle long enough to be checked every Nth cycle.")
    channel = serializers.IntegerField(source="map.channel_id", read_only=True)
    account = serializers.IntegerField(source="map.account_id", read_only=True, help_text="The reading account.")

    class Meta:
        model = TopicProgress
        fields = [
            "id",
            "channel",
            "account",
            "topic_id",
            "title",
            "fetch_enabled",
            "last_processed_message_id",
            "last_scanned_at",
            "last_scan_found_archives",
            "consecutive_empty_scans",
            "in_backoff",
        ]
        read_only_fields = [name for name in fields if name != "fetch_enabled"]


class TopicFetchSerializer(serializers.Serializer):
    fetch_enabled = serializers.BooleanField(help_text="Scan this topic; off keeps its watermark where it is.")


class TopicFilterSerializer(serializers.Serializer):
    channel = serializers.IntegerField(required=False, help_text="Only this channel's topics.")


@extend_schema_view(
    list=extend_schema(
        summary="List forum topics, one per reading account and topic", parameters=[TopicFilterSerializer]
    ),
    retrieve=extend_schema(summary="One forum topic of one reading account"),
)
class TopicViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    serializer_class = TopicSerializer

    def get_queryset(self):
        if self.action != "list":
            return selectors.topic_list()
        filters = TopicFilterSerializer(data=self.request.query_params)
        filters.is_valid(raise_exception=True)
        return selectors.topic_list(channel=filters.validated_data.get("channel"))

    @extend_schema(
        summary="Turn fetching of a topic on or off",
        request=TopicFetchSerializer,
        responses={200: TopicSerializer, 400: BAD_REQUEST},
    )
    def partial_update(self, request, pk=None):
        data = TopicFetchSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        topic = services.topic_set_fetch(topic=self.get_object(), fetch_enabled=data.validated_data["fetch_enabled"])
        return Response(TopicSerializer(topic).data)


# Destination ----------------------------------------------------------------------------------------------


class DestinationSerializer(serializers.Serializer):
    channel = ChannelSerializer(allow_null=True, help_text="The destination channel; null when none is chosen.")
    writers = serializers.ListField(child=serializers.IntegerField(), help_text="Ids of the accounts that upload.")


class DestinationSetSerializer(serializers.Serializer):
    channel = serializers.PrimaryKeyRelatedField(queryset=Channel.objects.select_related("chat"))
    writers = serializers.PrimaryKeyRelatedField(
        queryset=TelegramAccount.objects.all(),
        many=True,
        required=False,
        help_text="Accounts that upload packages there; each must be able to post. Default: every one that can.",
    )


def destination_data() -> dict:
    destination = services.destination_get()
    if destination is None:
        return {"channel": None, "writers": []}
    channel = selectors.channel_get(pk=destination.pk)
    return {"channel": channel, "writers": [m.account_id for m in channel.maps.all() if m.role == MapRole.WRITER]}


class DestinationView(APIView):
    @extend_schema(summary="The destination channel and its writers", responses=DestinationSerializer)
    def get(self, request):
        return Response(DestinationSerializer(destination_data()).data)

    @extend_schema(
        summary="Make a channel the destination, with the accounts that upload there",
        request=DestinationSetSerializer,
        responses={200: DestinationSerializer, 400: BAD_REQUEST},
    )
    def put(self, request):
        data = DestinationSetSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.destination_set(channel=data.validated_data["channel"], writers=data.validated_data.get("writers"))
        return Response(DestinationSerializer(destination_data()).data)

    @extend_schema(
        summary="Make a channel the destination (same as PUT)",
        request=DestinationSetSerializer,
        responses={200: DestinationSerializer, 400: BAD_REQUEST},
    )
    def post(self, request):
        return self.put(request)


# Joining, leaving, creating ------------------------------------------------------------------------------


class JoinSerializer(serializers.Serializer):
    account = serializers.PrimaryKeyRelatedField(
        queryset=TelegramAccount.objects.all(), help_text="The account that joins, its id in /api/accounts/."
    )
    link = serializers.CharField(
        allow_blank=True,
        max_length=300,
        help_text="@username, t.me/username, an invite link (t.me/+HASH, t.me/joinchat/HASH) or a tg:// link.",
    )


class ChatPreviewSerializer(serializers.Serializer):
    title = serializers.CharField()
    type = serializers.CharField(help_text="channel, supergroup or group.")
    members_count = serializers.IntegerField(allow_null=True)
    forum = serializers.BooleanField(
        allow_null=True, help_text="Null: Telegram's invite to a private chat does not say before joining."
    )
    already_member = serializers.BooleanField()
    request_needed = serializers.BooleanField(help_text="Its admins approve each join: joining sends a request.")
    username = serializers.CharField(allow_blank=True)


class JoinOutcomeSerializer(serializers.Serializer):
    title = serializers.CharField()
    status = serializers.ChoiceField(choices=list(services.STATUS_WORDS))
    status_label = serializers.CharField(help_text="The status in words.")
    message = serializers.CharField(allow_blank=True, help_text="Why it failed or was not tried.")
    channel = serializers.IntegerField(source="channel.pk", allow_null=True, default=None)


class JoinSourcesSerializer(serializers.Serializer):
    account = serializers.PrimaryKeyRelatedField(
        queryset=TelegramAccount.objects.all(), help_text="The (new) account that joins, its id in /api/accounts/."
    )


class DestinationCreateSerializer(serializers.Serializer):
    account = serializers.PrimaryKeyRelatedField(
        queryset=TelegramAccount.objects.all(), help_text="The account that creates and owns the channel."
    )
    title = serializers.CharField(allow_blank=True, max_length=300)
    about = serializers.CharField(required=False, allow_blank=True, default="", max_length=1000)
    writers = serializers.PrimaryKeyRelatedField(
        queryset=TelegramAccount.objects.all(),
        many=True,
        required=False,
        default=list,
        help_text="Other accounts that upload there: each is added as an admin who posts.",
    )


class WriterOutcomeSerializer(serializers.Serializer):
    account = serializers.IntegerField()
    added = serializers.BooleanField()
    message = serializers.CharField(allow_blank=True, help_text="Why Telegram refused to add it.")


class DestinationCreatedSerializer(DestinationSerializer):
    added = WriterOutcomeSerializer(many=True, help_text="Each writer asked for, and whether it was added.")


class OnboardingViewSet(viewsets.ViewSet):
    """Joining, leaving and creating channels with an account (real Telegram requests, made while you wait)."""

    @extend_schema(
        summary="What Telegram tells an account about a chat before it joins (title, members, forum)",
        request=JoinSerializer,
        responses={200: ChatPreviewSerializer, 400: BAD_REQUEST},
    )
    @action(detail=False, methods=["post"])
    def preview(self, request):
        data = JoinSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        return Response(ChatPreviewSerializer(services.chat_preview(**data.validated_data)).data)

    @extend_schema(
        summary="Join a channel or group by @username or invite link; the account reads a channel it joins",
        request=JoinSerializer,
        responses={200: JoinOutcomeSerializer, 400: BAD_REQUEST},
    )
    @action(detail=False, methods=["post"])
    def join(self, request):
        data = JoinSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        return Response(JoinOutcomeSerializer(services.channel_join(**data.validated_data)).data)

    @extend_schema(
        summary="Make an account join every active source the other accounts read, each outcome reported",
        request=JoinSourcesSerializer,
        responses={200: JoinOutcomeSerializer(many=True), 400: BAD_REQUEST},
    )
    @action(detail=False, methods=["post"], url_path="join-sources")
    def join_sources(self, request):
        data = JoinSourcesSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        outcomes = services.account_join_sources(account=data.validated_data["account"])
        return Response(JoinOutcomeSerializer(outcomes, many=True).data)

    @idempotent
    @extend_schema(
        summary="Create a new channel with an account and make it the destination, its writers added as admins",
        request=DestinationCreateSerializer,
        responses={201: DestinationCreatedSerializer, 400: BAD_REQUEST},
    )
    @action(detail=False, methods=["post"], url_path="create-destination")
    def create_destination(self, request):
        data = DestinationCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        created = services.destination_create(**data.validated_data)
        added = [{"account": writer.pk, "added": not error, "message": error} for writer, error in created.writers]
        return Response(DestinationCreatedSerializer(destination_data() | {"added": added}).data, status=201)


# Runs -----------------------------------------------------------------------------------------------------


class ChannelScanSerializer(serializers.ModelSerializer):
    channel_title = serializers.CharField(source="channel.title", read_only=True)

    class Meta:
        model = ChannelScan
        fields = [
            "channel",
            "channel_title",
            "scanned_at",
            "action",
            "reason",
            "topics",
            "requests",
            "messages",
            "found",
            "ingested",
            "duplicates",
            "skipped",
            "filtered",
            "seconds",
        ]
        read_only_fields = fields


class IngestionRunSerializer(OutcomeFields, serializers.ModelSerializer):
    progress_percent = serializers.IntegerField(read_only=True, help_text="Of the current file, 0–100.")
    scans = serializers.SerializerMethodField(help_text="What the run did with each channel and why, in order.")

    class Meta:
        model = IngestionRun
        fields = [
            "id",
            "account",
            "trigger",
            "channel",
            "status",
            "outcome",
            "outcome_text",
            "requests_sent",
            "messages_scanned",
            "archives_found",
            "duplicates",
            "ingested",
            "skipped",
            "filtered",
            "bytes_downloaded",
            "bytes_uploaded",
            "current_channel",
            "current_topic",
            "current_file",
            "current_step",
            "current_bytes_done",
            "current_bytes_total",
            "progress_percent",
            "error",
            "worker_id",
            "created_at",
            "claimed_at",
            "heartbeat_at",
            "finished_at",
            "scans",
        ]
        read_only_fields = fields

    @extend_schema_field(ChannelScanSerializer(many=True))
    def get_scans(self, run: IngestionRun) -> list[dict]:
        return ChannelScanSerializer(run.scans.all(), many=True).data  # prefetched in order by the view


class RunFilterSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=RunStatus.choices, required=False)
    outcome = serializers.ChoiceField(choices=list(RUN_OUTCOME_FILTERS), required=False)
    account = serializers.IntegerField(required=False)


@extend_schema_view(
    list=extend_schema(summary="List ingestion runs, newest first", parameters=[RunFilterSerializer]),
    retrieve=extend_schema(summary="One ingestion run, with its live progress while it runs"),
)
class IngestionRunViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = IngestionRunSerializer

    def get_queryset(self):
        scans = Prefetch(
            "scans", queryset=ChannelScan.objects.select_related("channel__chat").order_by("scanned_at", "pk")
        )
        if self.action != "list":
            return selectors.run_list().prefetch_related(scans)
        filters = RunFilterSerializer(data=self.request.query_params)
        filters.is_valid(raise_exception=True)
        return selectors.run_list(**filters.validated_data).prefetch_related(scans)


class TriggerSerializer(serializers.Serializer):
    account = serializers.PrimaryKeyRelatedField(
        queryset=TelegramAccount.objects.all(),
        required=False,
        allow_null=True,
        help_text="Ingest with this account only; by default every logged-in account that reads an active channel.",
    )


class TriggerResultSerializer(serializers.Serializer):
    message = serializers.CharField()
    runs = IngestionRunSerializer(many=True, help_text="The runs queued (or already open, for one account).")


class IngestionTriggerView(APIView):
    @idempotent
    @extend_schema(
        summary="Ingest now: queue a run per account, or for one account",
        description="An account that already has a run queued or running keeps it; no second run is queued.",
        request=TriggerSerializer,
        responses={200: TriggerResultSerializer, 400: BAD_REQUEST},
    )
    def post(self, request):
        data = TriggerSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        account = data.validated_data.get("account")
        if account is None:
            runs = services.ingestion_cycle_start(trigger=IngestionTrigger.MANUAL)
            message = f"Queued {len(runs)} run{'' if len(runs) == 1 else 's'}."
        else:
            run, created = services.ingestion_run_request(account=account, trigger=IngestionTrigger.MANUAL)
            runs = [run]
            message = f"Queued run {run.pk}." if created else f"Run {run.pk} is already {run.outcome.label.lower()}."
        result = {"message": message, "runs": [selectors.run_get(pk=run.pk) for run in runs]}
        return Response(TriggerResultSerializer(result).data)


# Skipped packages -----------------------------------------------------------------------------------------


class SkippedPackageSerializer(serializers.ModelSerializer):
    reason_label = serializers.CharField(source="get_reason_display", read_only=True)

    class Meta:
        model = SkippedPackage
        fields = [
            "id",
            "file_name",
            "file_size",
            "is_multipart",
            "part_count",
            "reason",
            "reason_label",
            "is_retryable",
            "attempt_count",
            "error_message",
            "channel",
            "message_id",
            "message_ids",
            "topic_id",
            "account",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields


class SkippedFilterSerializer(serializers.Serializer):
    reason = serializers.ChoiceField(choices=SkipReason.choices, required=False)
    channel = serializers.IntegerField(required=False)


class RetryAllSerializer(serializers.Serializer):
    # Checked by the service, whose message lists the reasons to use.
    reason = serializers.CharField(
        required=False,
        allow_blank=True,
        help_text=f"Only skipped packages of this reason: one of {', '.join(SkipReason.values)}. Default: all.",
    )


class RetryResultSerializer(serializers.Serializer):
    message = serializers.CharField()
    retried = serializers.IntegerField(help_text="How many skipped packages the next cycle tries again.")


@extend_schema_view(
    list=extend_schema(summary="List skipped packages, newest failure first", parameters=[SkippedFilterSerializer]),
    retrieve=extend_schema(summary="One skipped package"),
)
class SkippedPackageViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = SkippedPackageSerializer

    def get_queryset(self):
        if self.action != "list":
            return selectors.skipped_list()
        filters = SkippedFilterSerializer(data=self.request.query_params)
        filters.is_valid(raise_exception=True)
        return selectors.skipped_list(**filters.validated_data)

    @idempotent
    @extend_schema(
        summary="Retry: delete the row, rewind the channel and ingest it now (else the next cycle tries the set)",
        request=None,
        responses={200: RetryResultSerializer},
    )
    @action(detail=True, methods=["post"])
    def retry(self, request, pk=None):
        skipped = self.get_object()
        run = services.skipped_package_retry(skipped=skipped)
        when = f"run #{run.pk} tries it now" if run else "the next ingestion cycle tries it again"
        message = f"{skipped.file_name} is queued for retry; {when}."
        return Response(RetryResultSerializer({"message": message, "retried": 1}).data)

    @idempotent
    @extend_schema(
        summary="Retry every skipped package, or those of one reason",
        request=RetryAllSerializer,
        responses={200: RetryResultSerializer, 400: BAD_REQUEST},
    )
    @action(detail=False, methods=["post"], url_path="retry-all")
    def retry_all(self, request):
        data = RetryAllSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        count = services.skipped_packages_retry_all(reason=data.validated_data.get("reason", ""))
        message = f"{count} skipped package{'' if count == 1 else 's'} queued for retry."
        return Response(RetryResultSerializer({"message": message, "retried": count}).data)


# The catalog: audits against the destination, and the rebuild from it -----------------------------------------


class CatalogAuditSerializer(serializers.ModelSerializer):
    missing = serializers.JSONField(
        help_text='Packages whose destination messages are gone: [{"package", "file_name", "message_ids"}].'
    )
    orphans = serializers.JSONField(
        help_text='Destination documents in no package: [{"message_id", "name", '
        '"content_hash"}] ("" = no catalog line).'
    )
    coverage = serializers.JSONField(
        help_text='Per source channel and fetched topic: [{"channel", "title", '
        '"topic_id", "topic_title", "scanned_through", "last_scan", "gaps"}].'
    )

    class Meta:
        model = CatalogAudit
        fields = [
            "id",
            "created_at",
            "finished_at",
            "packages_checked",
            "documents_checked",
            "missing",
            "orphans",
            "coverage",
            "error",
        ]
        read_only_fields = fields


class QueuedSerializer(serializers.Serializer):
    message = serializers.CharField()


class RepairResultSerializer(serializers.Serializer):
    message = serializers.CharField()
    packages = serializers.IntegerField(help_text="Packages marked to be uploaded again by the next cycle.")


@extend_schema_view(
    list=extend_schema(summary="Catalog audits, newest first"),
    retrieve=extend_schema(summary="One catalog audit: missing destination messages, orphans, coverage"),
)
class CatalogAuditViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = CatalogAuditSerializer
    queryset = CatalogAudit.objects.all()

    @extend_schema(summary="Audit now (queued)", request=None, responses={202: QueuedSerializer})
    def create(self, request):
        services.catalog_task_send(task_names.CATALOG_AUDIT)
        return Response({"message": "Audit queued."}, status=202)

    @idempotent
    @extend_schema(
        summary="Upload again the packages this audit found without their destination messages",
        request=None,
        responses={200: RepairResultSerializer, 409: OpenApiResponse(ErrorSerializer, description="Not the latest.")},
    )
    @action(detail=True, methods=["post"], url_path="repair-missing")
    def repair_missing(self, request, pk=None):
        count = catalog_audit_repair_missing(audit=self.get_object())
        return Response({"message": f"{count} packages will be uploaded again.", "packages": count})


class CatalogRebuildView(APIView):
    @idempotent
    @extend_schema(
        summary="Rebuild or repair the catalog from the destination channel (queued)",
        description="Reads the catalog line of every destination document; a notification gives the outcome.",
        request=None,
        responses={202: QueuedSerializer, 409: OpenApiResponse(ErrorSerializer, description="No destination.")},
    )
    def post(self, request):
        if services.destination_get() is None:
            raise OperatorError("No destination channel is set: pick one first (/api/destination/).")
        services.catalog_task_send(task_names.CATALOG_REBUILD)
        return Response({"message": "Rebuild queued."}, status=202)

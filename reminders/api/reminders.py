"""The reminders API: create, change and delete reminders with their parts and groups; Send now, Send me a test
and the ETA pill."""

from dataclasses import replace

from django.conf import settings
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field, extend_schema_view
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from accounts.models import Chat, TelegramAccount
from core import clock
from core.access import ScopeAndRole
from core.api import error_response, idempotent
from reminders import selectors, services, trial_send
from reminders.api.eta import EtaInSerializer, EtaSerializer
from reminders.api.runs import ReminderRunSerializer
from reminders.api.shared import ERRORS
from reminders.eta import eta_estimate
from reminders.models import Audience, MediaFile, PartFormat, Reminder, ReminderPart, ReminderTarget
from reminders.schedule import DeliveryWindow, zone
from reminders.services import PartSpec, ReminderSpec, TargetSpec
from telegram.records import TOPIC_ID_MAX


class ScheduleSerializer(serializers.Serializer):
    crontab = serializers.CharField(
        required=False, help_text="Five fields in the reminder's time zone, e.g. `0 9 * * 1-5`."
    )
    at = serializers.DateTimeField(required=False, help_text="One send at this moment (ISO 8601).")

    def validate(self, attrs):
        if len(attrs) != 1:
            raise ValidationError('Give either {"crontab": "…"} or {"at": "<ISO time>"}.')
        return attrs


class PartSerializer(serializers.ModelSerializer):
    class Meta:
        model = ReminderPart
        fields = ["order", "text", "media", "album", "caption", "format"]
        read_only_fields = fields


class PartInSerializer(serializers.Serializer):
    text = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False, default="")
    media = serializers.PrimaryKeyRelatedField(
        queryset=MediaFile.objects.all(), required=False, allow_null=True, default=None, help_text="A media id."
    )
    album = serializers.PrimaryKeyRelatedField(
        queryset=MediaFile.objects.all(),
        many=True,
        required=False,
        default=list,
        help_text="2–10 media ids sent as one album with the caption, instead of `media`.",
    )
    caption = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False, default="")
    format = serializers.ChoiceField(
        choices=PartFormat.choices,
        required=False,
        default=PartFormat.PLAIN,
        help_text="How text or caption is written: Telegram gets it formatted (bold, links, …).",
    )


class TargetSerializer(serializers.ModelSerializer):
    chat = serializers.IntegerField(source="chat.telegram_id", help_text="Telegram chat id.")
    chat_title = serializers.CharField(source="chat.title")
    topic = serializers.IntegerField(source="topic_id", allow_null=True)

    class Meta:
        model = ReminderTarget
        fields = ["chat", "chat_title", "topic"]
        read_only_fields = fields


class TargetInSerializer(serializers.Serializer):
    chat = serializers.IntegerField(help_text="Telegram chat id of a group the account is in.")
    topic = serializers.IntegerField(
        required=False,
        allow_null=True,
        default=None,
        min_value=1,
        max_value=TOPIC_ID_MAX,
        help_text="Forum topic id; null = General.",
    )


class ReminderSerializer(serializers.ModelSerializer):
    schedule = serializers.SerializerMethodField()
    parts = PartSerializer(many=True, read_only=True)
    targets = TargetSerializer(many=True, read_only=True)
    audiences = serializers.SerializerMethodField(help_text="Audience ids; their groups go too.")

    class Meta:
        model = Reminder
        fields = [
            "id",
            "account",
            "name",
            "timezone",
            "window_start_hour",
            "window_end_hour",
            "schedule",
            "enabled",
            "auto_resume",
            "silent",
            "link_preview",
            "pin",
            "replace_previous",
            "edit_in_place",
            "audiences",
            "parts",
            "targets",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields

    def get_audiences(self, reminder: Reminder) -> list[int]:
        return [link.audience_id for link in reminder.audience_links.all()]

    @extend_schema_field(ScheduleSerializer(allow_null=True))
    def get_schedule(self, reminder: Reminder):
        if reminder.schedule_crontab:
            return {"crontab": reminder.schedule_crontab}
        if reminder.schedule_at is not None:
            return {"at": serializers.DateTimeField().to_representation(reminder.schedule_at)}
        return None


class ReminderWriteSerializer(serializers.Serializer):
    account = serializers.PrimaryKeyRelatedField(
        queryset=TelegramAccount.objects.all(), help_text="The sending account (its id in /api/accounts/)."
    )
    name = serializers.CharField(max_length=200)
    timezone = serializers.CharField(max_length=64, help_text="IANA name, e.g. Asia/Kuala_Lumpur.")
    window_start_hour = serializers.IntegerField(
        min_value=0, max_value=23, help_text="Local hour the delivery window opens."
    )
    window_end_hour = serializers.IntegerField(
        min_value=1,
        max_value=24,
        help_text="Local hour it closes: before the start runs overnight (22 → 6); 0 → 24 is all day.",
    )
    schedule = ScheduleSerializer(required=False, allow_null=True, help_text="Omit or null for manual sends only.")
    parts = PartInSerializer(many=True, help_text="In order; each a text, or a media with an optional caption.")
    targets = TargetInSerializer(many=True)
    enabled = serializers.BooleanField(default=True)
    auto_resume = serializers.BooleanField(default=False)
    silent = serializers.BooleanField(default=False, help_text="Members get no notification.")
    link_preview = serializers.BooleanField(default=True, help_text="Telegram shows a preview of the first link.")
    pin = serializers.BooleanField(default=False, help_text="Pin each group's post; the previous run's is unpinned.")
    replace_previous = serializers.BooleanField(
        default=False, help_text="Delete the previous run's post in each group before sending."
    )
    audiences = serializers.PrimaryKeyRelatedField(
        queryset=Audience.objects.all(),
        many=True,
        required=False,
        default=list,
        help_text="Audience ids (/api/audiences/): their groups too, checked when a run is made.",
    )
    edit_in_place = serializers.BooleanField(
        default=False,
        help_text="With replace_previous: edit the previous post in place where the parts allow (text to text, "
        "one media to one media), else delete it and send anew.",
    )

    def validate_targets(self, targets):
        ids = [target["chat"] for target in targets]
        chats = {chat.telegram_id: chat for chat in Chat.objects.filter(telegram_id__in=ids)}
        unknown = [
            f"targets[{index}]: chat {chat_id} is unknown; refresh the account's chats."
            for index, chat_id in enumerate(ids)
            if chat_id not in chats
        ]
        if unknown:
            raise ValidationError(unknown)
        return [TargetSpec(chat=chats[target["chat"]], topic_id=target.get("topic")) for target in targets]

    def validate_parts(self, parts):
        # nested fields get no defaults in a partial update
        return [
            PartSpec(
                text=part.get("text", ""),
                media=part.get("media"),
                caption=part.get("caption", ""),
                format=part.get("format", PartFormat.PLAIN),
                album=part.get("album", []),
            )
            for part in parts
        ]

    def spec(self, current: ReminderSpec | None = None) -> ReminderSpec:
        data = dict(self.validated_data)
        if "schedule" in data:
            schedule = data.pop("schedule") or {}
            data["schedule_crontab"] = schedule.get("crontab", "")
            data["schedule_at"] = schedule.get("at")
        return replace(current, **data) if current is not None else ReminderSpec(**data)


class FireInSerializer(serializers.Serializer):
    again = serializers.BooleanField(
        default=False,
        help_text="Send again to every group although a run of this reminder is queued, waiting, sending or "
        "paused; without it that run is answered (409) instead of a second one.",
    )


class TestSendInSerializer(serializers.Serializer):
    chat = serializers.IntegerField(
        required=False,
        allow_null=True,
        default=None,
        help_text="Telegram chat id of one of the account's chats; none = the account's own Saved Messages.",
    )


class TestSentSerializer(serializers.Serializer):
    where = serializers.CharField(help_text="Saved Messages, or the chat's title.")
    at = serializers.DateTimeField(help_text="When it was sent.")
    messages = serializers.IntegerField(help_text="Messages sent (an album's items each count).")
    message = serializers.CharField(source="summary", help_text="What the page says: where, when, not counted.")


class RunActiveSerializer(serializers.Serializer):
    message = serializers.CharField(help_text="Which run is going on, and what to do.")
    run = ReminderRunSerializer(help_text="The run still going on: open, resume or cancel it.")


@extend_schema_view(
    list=extend_schema(summary="List reminders"),
    retrieve=extend_schema(summary="One reminder with its parts and groups"),
    destroy=extend_schema(
        summary="Delete a reminder and its schedule; its runs are kept (their `reminder` becomes null)",
        responses={204: None, **ERRORS},
    ),
)
class ReminderViewSet(
    ScopeAndRole, mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.DestroyModelMixin, viewsets.GenericViewSet
):
    serializer_class = ReminderSerializer

    def get_queryset(self):
        return selectors.reminder_list()

    def _response(self, reminder: Reminder, *, status_code=status.HTTP_200_OK) -> Response:
        return Response(ReminderSerializer(selectors.reminder_get(pk=reminder.pk)).data, status=status_code)

    @extend_schema(
        summary="Create a reminder (and its beat schedule)",
        request=ReminderWriteSerializer,
        responses={201: ReminderSerializer, 400: ERRORS[400]},
    )
    def create(self, request):
        data = ReminderWriteSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        reminder = services.reminder_create(spec=data.spec())
        return self._response(reminder, status_code=status.HTTP_201_CREATED)

    @extend_schema(
        summary="Change a reminder; `parts` and `targets`, when given, replace the old ones",
        request=ReminderWriteSerializer(partial=True),
        responses={200: ReminderSerializer, 400: ERRORS[400]},
    )
    def partial_update(self, request, pk=None):
        reminder = self.get_object()
        data = ReminderWriteSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        spec = data.spec(selectors.reminder_spec(reminder=reminder))
        return self._response(services.reminder_update(reminder=reminder, spec=spec))

    def perform_destroy(self, instance):
        services.reminder_delete(reminder=instance)

    @idempotent
    @extend_schema(
        summary="Send now: fire a run",
        description="Outside the delivery window the run is `waiting`: it starts by itself when the window opens. "
        "While a run of the reminder is queued, waiting, sending or paused the answer is 409 naming that run "
        '(`run`), unless the body says `{"again": true}`.',
        request=FireInSerializer,
        responses={
            201: ReminderRunSerializer,
            400: ERRORS[400],
            409: OpenApiResponse(RunActiveSerializer, description="A run of it is going on, or another refusal."),
        },
    )
    @action(detail=True, methods=["post"])
    def fire(self, request, pk=None):
        data = FireInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            run = services.reminder_fire(reminder=self.get_object(), again=data.validated_data["again"])
        except services.ReminderRunActive as exc:
            active = ReminderRunSerializer(selectors.reminder_run_get(pk=exc.run.pk)).data
            return error_response(exc.message, status_code=status.HTTP_409_CONFLICT, run=active)
        return Response(ReminderRunSerializer(selectors.reminder_run_get(pk=run.pk)).data, status=201)

    @extend_schema(
        summary="Send me a test: the parts at once to Saved Messages (or one of the account's chats)",
        description="Sent as groups get them, outside the delivery window and not counted in the send budget; "
        "refused (409) when the account rests, is stopped, or a FloodWait holds it.",
        request=TestSendInSerializer,
        responses={200: TestSentSerializer, 400: ERRORS[400], 409: ERRORS[409]},
    )
    @action(detail=True, methods=["post"], url_path="test-send")
    def test_send(self, request, pk=None):
        data = TestSendInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        sent = trial_send.reminder_test_send(reminder=self.get_object(), chat=data.validated_data["chat"])
        return Response(TestSentSerializer(sent).data)

    @extend_schema(
        summary="How long a fan-out takes, and whether it fits in its window (the ETA pill)",
        description="`ceil(targets × parts / rate)` minutes + 15 %, at least 1; 0 groups take 0.",
        request=EtaInSerializer,
        responses={200: EtaSerializer, 400: ERRORS[400]},
    )
    @action(detail=False, methods=["post"])
    def eta(self, request):
        data = EtaInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        estimate = eta_estimate(
            targets=values["targets"],
            parts=values["parts"],
            fire_at=values.get("fire_at") or clock.now(),
            window=DeliveryWindow(
                tz=zone(values["timezone"]),
                start_hour=values["window_start_hour"],
                end_hour=values["window_end_hour"],
            ),
            rate_per_minute=settings.REMINDER_MAX_SEND_PER_MINUTE,
        )
        account = values.get("account")
        observed = selectors.account_observed_rate(account_id=account.pk) if account else None
        body = {
            "duration_minutes": estimate.duration_minutes,
            "fire_at": estimate.fire_at,
            "starts_at": estimate.starts_at,
            "finishes_at": estimate.finishes_at,
            "window_end_at": estimate.window_end_at,
            "fits": estimate.fits,
            "label": estimate.label,
            "rate_per_minute": estimate.rate_per_minute,
            "observed_rate_per_minute": observed,
        }
        return Response(EtaSerializer(body).data)

"""The reminder runs API: list and read runs, their groups and report; Pause, Move, Resume, Cancel, Retry failed."""

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from accounts.models import TelegramAccount
from core.access import ScopeAndRole
from core.api import OutcomeFields, idempotent
from reminders import selectors, services
from reminders.api.shared import ERRORS
from reminders.models import RUN_OUTCOME_FILTERS, ReminderRun, ReminderRunTarget


class ReminderRunSerializer(OutcomeFields, serializers.ModelSerializer):
    class Meta:
        model = ReminderRun
        fields = [
            "id",
            "reminder",
            "reminder_name",
            "account",
            "trigger",
            "slot",
            "status",
            "outcome",
            "outcome_text",
            "sent",
            "failed",
            "skipped",
            "pending",
            "total",
            "error_summary",
            "fired_at",
            "window_end_at",
            "created_at",
            "finished_at",
            "pause_cause",
            "moved_from",
            "can_pause",
            "can_resume",
            "can_cancel",
            "can_retry_failed",
            "can_move",
        ]
        read_only_fields = fields
        extra_kwargs = {
            "slot": {
                "help_text": "The schedule's due time this run serves (crontab minute or one-off time); null for "
                "Send now. One run per slot, however often it is fired."
            }
        }


class RunFilterSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=ReminderRun._meta.get_field("status").choices, required=False)
    outcome = serializers.ChoiceField(choices=list(RUN_OUTCOME_FILTERS), required=False)
    reminder = serializers.IntegerField(required=False)
    account = serializers.IntegerField(required=False)


class RunTargetSerializer(serializers.ModelSerializer):
    chat = serializers.IntegerField(source="chat.telegram_id")
    chat_title = serializers.CharField(source="chat.title")
    topic = serializers.IntegerField(source="topic_id", allow_null=True)
    parts_total = serializers.IntegerField(help_text="The run's parts; `parts_sent` of them went out, in order.")

    class Meta:
        model = ReminderRunTarget
        fields = [
            "id",
            "chat",
            "chat_title",
            "topic",
            "status",
            "parts_sent",
            "parts_total",
            "attempts",
            "latency_ms",
            "error",
            "finished_at",
        ]
        read_only_fields = fields


class RunReportRowSerializer(serializers.Serializer):
    group = serializers.CharField(help_text="The group's title.")
    chat = serializers.IntegerField(help_text="Telegram chat id.")
    topic = serializers.IntegerField(allow_null=True)
    part = serializers.IntegerField(help_text="1 for the first part.")
    status = serializers.CharField(help_text="sent, or the group's status (pending, failed, skipped…).")
    sent_at = serializers.DateTimeField(allow_null=True, help_text="When the group's last part went out.")
    message_id = serializers.IntegerField(
        allow_null=True, help_text="Null when not sent, or sent before a crash (Telegram gives no id then)."
    )
    album_message_ids = serializers.ListField(child=serializers.IntegerField(), help_text="An album's other items.")
    previous_post = serializers.CharField(
        help_text="With Replace: the previous run's post “Edited in place” or “Deleted, sent anew” (and why not "
        "edited); blank when not asked."
    )
    error = serializers.CharField(help_text="Why the group stopped at this part.")


class RunMoveSerializer(serializers.Serializer):
    account = serializers.PrimaryKeyRelatedField(
        queryset=TelegramAccount.objects.all(), help_text="The account that sends the pending groups instead."
    )


class RunTargetFilterSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=ReminderRunTarget._meta.get_field("status").choices, required=False)


@extend_schema_view(
    list=extend_schema(summary="List reminder runs", parameters=[RunFilterSerializer]),
    retrieve=extend_schema(summary="One reminder run with its counters"),
)
class ReminderRunViewSet(ScopeAndRole, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    serializer_class = ReminderRunSerializer

    def get_queryset(self):
        if self.action != "list":
            return selectors.reminder_run_list()
        filters = RunFilterSerializer(data=self.request.query_params)
        filters.is_valid(raise_exception=True)
        values = filters.validated_data
        return selectors.reminder_run_list(
            status=values.get("status"),
            outcome=values.get("outcome", ""),
            reminder_id=values.get("reminder"),
            account_id=values.get("account"),
        )

    def _response(self, run: ReminderRun) -> Response:
        return Response(ReminderRunSerializer(selectors.reminder_run_get(pk=run.pk)).data)

    @extend_schema(
        summary="The run's groups and how each went",
        parameters=[RunTargetFilterSerializer],
        responses={200: RunTargetSerializer(many=True)},
    )
    @action(detail=True, methods=["get"])
    def targets(self, request, pk=None):
        filters = RunTargetFilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        targets = selectors.reminder_run_targets(
            run_id=self.get_object().pk, status=filters.validated_data.get("status")
        )
        page = self.paginate_queryset(targets)
        return self.get_paginated_response(RunTargetSerializer(page, many=True).data)

    @extend_schema(
        summary="The run's report: every group, one row per part (also as CSV on the run page)",
        responses={200: RunReportRowSerializer(many=True)},
    )
    @action(detail=True, methods=["get"])
    def report(self, request, pk=None):
        rows = list(selectors.reminder_run_report(run=self.get_object()))
        page = self.paginate_queryset(rows)
        return self.get_paginated_response(RunReportRowSerializer(page, many=True).data)

    @extend_schema(
        summary="Pause a queued or running run: it stops within a second, even mid-wait, every part sent so far kept",
        request=None,
        responses={200: ReminderRunSerializer, 409: ERRORS[409]},
    )
    @action(detail=True, methods=["post"])
    def pause(self, request, pk=None):
        return self._response(services.reminder_run_pause(run=self.get_object()))

    @idempotent
    @extend_schema(
        summary="Move a stopped run's pending groups to another account, as a new linked run",
        description="The account must be logged in, on, free to send and in every pending group (checked: 409 "
        "names the groups it is missing). The answer is the new run; the old one ends partial and says where "
        "its groups went.",
        request=RunMoveSerializer,
        responses={200: ReminderRunSerializer, 400: ERRORS[400], 409: ERRORS[409]},
    )
    @action(detail=True, methods=["post"])
    def move(self, request, pk=None):
        data = RunMoveSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        return self._response(services.reminder_run_move(run=self.get_object(), account=data.validated_data["account"]))

    @idempotent
    @extend_schema(
        summary="Resume a paused (or failed) run: only its pending groups are sent",
        request=None,
        responses={200: ReminderRunSerializer, 409: ERRORS[409]},
    )
    @action(detail=True, methods=["post"])
    def resume(self, request, pk=None):
        return self._response(services.reminder_run_resume(run=self.get_object()))

    @extend_schema(
        summary="Cancel a run: pending groups are skipped and the run ends partial",
        request=None,
        responses={200: ReminderRunSerializer, 409: ERRORS[409]},
    )
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        return self._response(services.reminder_run_cancel(run=self.get_object()))

    @idempotent
    @extend_schema(
        summary="Send the failed groups again",
        request=None,
        responses={200: ReminderRunSerializer, 409: ERRORS[409]},
    )
    @action(detail=True, methods=["post"], url_path="retry-failed")
    def retry_failed(self, request, pk=None):
        return self._response(services.reminder_run_retry_failed(run=self.get_object()))

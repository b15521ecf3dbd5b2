"""API for what the Bot page changes: the bot's settings (on or off, its token - set, never read back -, who may use
it: an allow-list, members of chosen chats, everyone -, how many packages one person may get a day) and the people
who wrote to it (blocked or not); and making the bot an admin of the archive channel, by an account there."""

from django.db import transaction
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field, extend_schema_view
from rest_framework import mixins, serializers, viewsets
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.models import Chat
from core.access import ScopeAndRole
from core.api import BAD_REQUEST, ErrorSerializer
from core.numbers import BIGINT_MAX
from packages.bot import selectors, services
from packages.models import BotAudience, BotPerson, BotSettings

TOKEN_EMPTY = (
    "An empty token does not remove the stored one (nothing does: only a new token replaces it); leave `token` out "
    "to keep it."
)


class MemberChatSerializer(serializers.ModelSerializer):
    class Meta:
        model = Chat
        fields = ["telegram_id", "title", "type"]
        read_only_fields = fields


class ChatIdsField(serializers.ListField):
    """The chosen chats, read and written as their Telegram ids (as /api/packages/{id}/send/ names chats)."""

    def get_attribute(self, bot: BotSettings) -> list[int]:
        return sorted(bot.member_chats.values_list("telegram_id", flat=True))


class BotSettingsSerializer(serializers.ModelSerializer):
    token = serializers.CharField(
        write_only=True,
        required=False,
        allow_blank=True,
        help_text="A new bot token from BotFather (123456789:AAE…), kept sealed. Never returned: `token_set` says "
        "whether there is one. Leave it out to keep the stored one; a new one makes the bot log in anew.",
    )
    token_set = serializers.SerializerMethodField(help_text="Whether the bot has a token to log in with.")
    token_from = serializers.SerializerMethodField(
        help_text='Where the token comes from: "the console" (set here or on the Bot page), "TELEGRAM_BOT_TOKEN" '
        '(the environment, used when the console has none) or "" (none).'
    )
    username = serializers.CharField(
        read_only=True, help_text="The bot's @username (without @) as Telegram said at its last login; '' before."
    )
    audience = serializers.ChoiceField(
        choices=BotAudience.choices,
        required=False,
        help_text="Who may use the bot: `allow_list` (the ids in `allowed_user_ids`), `members` (people in one of "
        "`member_chats`, asked of Telegram by the bot) or `everyone`.",
    )
    allowed_user_ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=BIGINT_MAX),
        required=False,
        help_text="Telegram user ids of the allow-list (a stranger who writes to the bot is told theirs).",
    )
    member_chats = ChatIdsField(
        child=serializers.IntegerField(min_value=-BIGINT_MAX, max_value=BIGINT_MAX),
        required=False,
        help_text="Telegram ids of the chats whose members may use the bot, among `member_chat_choices`. The bot "
        "must be in each (an admin of a channel).",
    )
    member_chat_choices = serializers.SerializerMethodField(
        help_text="The chats that may be chosen: channels and supergroups the accounts are in."
    )
    sends_per_day = serializers.IntegerField(
        min_value=0,
        max_value=services.SENDS_PER_DAY_MAX,
        required=False,
        help_text="Packages one person may get in 24 hours.",
    )

    class Meta:
        model = BotSettings
        fields = [
            "enabled",
            "token",
            "token_set",
            "token_from",
            "username",
            "audience",
            "allowed_user_ids",
            "member_chats",
            "member_chat_choices",
            "sends_per_day",
            "updated_at",
        ]
        read_only_fields = ["updated_at"]
        extra_kwargs = {"enabled": {"required": False, "help_text": "Whether the bot answers (off: it waits)."}}

    def get_token_set(self, bot: BotSettings) -> bool:
        return bool(services.bot_token_source())

    def get_token_from(self, bot: BotSettings) -> str:
        return services.bot_token_source()

    @extend_schema_field(MemberChatSerializer(many=True))
    def get_member_chat_choices(self, bot: BotSettings) -> list[dict]:
        return MemberChatSerializer(services.bot_member_chat_choices(), many=True).data

    def validate_token(self, token: str) -> str:
        if not token:
            raise serializers.ValidationError(TOKEN_EMPTY)
        if problem := services.bot_token_problem(token=token):
            raise serializers.ValidationError(problem)
        return token

    def validate_allowed_user_ids(self, ids: list[int]) -> list[int]:
        return sorted(set(ids))

    def validate_member_chats(self, telegram_ids: list[int]) -> list[Chat]:
        choices = {chat.telegram_id: chat for chat in services.bot_member_chat_choices()}
        unknown = [str(telegram_id) for telegram_id in telegram_ids if telegram_id not in choices]
        if unknown:
            raise serializers.ValidationError(
                f"Not a channel or supergroup of the accounts: {', '.join(unknown)}. Choose among "
                "`member_chat_choices` (refresh an account's chats if one is missing)."
            )
        return [choices[telegram_id] for telegram_id in dict.fromkeys(telegram_ids)]

    def validate(self, data: dict) -> dict:
        bot = self.instance
        audience = data.get("audience", bot.audience)
        chosen = data["member_chats"] if "member_chats" in data else list(bot.member_chats.all())
        if audience == BotAudience.MEMBERS and not chosen:
            raise serializers.ValidationError({"member_chats": [services.MEMBER_CHATS_MISSING]})
        return data

    def update(self, bot: BotSettings, data: dict) -> BotSettings:
        return services.bot_settings_update(
            enabled=data.get("enabled", bot.enabled),
            token=data.get("token"),
            audience=data.get("audience", bot.audience),
            allowed_user_ids=data.get("allowed_user_ids", bot.allowed_user_ids),
            sends_per_day=data.get("sends_per_day", bot.sends_per_day),
            member_chats=data.get("member_chats"),
        )


class BotSettingsView(ScopeAndRole, APIView):
    """One bot per console: its settings are one resource, read by anyone logged in, changed by operators."""

    @extend_schema(summary="The bot's settings (its token never shown)", responses=BotSettingsSerializer)
    def get(self, request):
        return Response(BotSettingsSerializer(services.bot_settings_get()).data)

    @extend_schema(
        summary="Change the bot's settings: only the fields sent",
        request=BotSettingsSerializer,
        responses={
            200: BotSettingsSerializer,
            400: BAD_REQUEST,
        },
    )
    def patch(self, request):
        with transaction.atomic():
            serializer = BotSettingsSerializer(services.bot_settings_lock(), data=request.data, partial=True)
            serializer.is_valid(raise_exception=True)
            bot = serializer.save()
        return Response(BotSettingsSerializer(bot).data)


class BotAdminSerializer(serializers.Serializer):
    chat = serializers.IntegerField(
        min_value=-BIGINT_MAX,
        max_value=BIGINT_MAX,
        help_text="Telegram id of a channel a logged-in account posts in (the archive channel): that account makes "
        "the bot an admin there.",
    )

    def validate_chat(self, telegram_id: int) -> Chat:
        chat = next((chat for chat in services.bot_admin_choices() if chat.telegram_id == telegram_id), None)
        if chat is None:
            raise serializers.ValidationError(
                f"No logged-in account posts in a channel {telegram_id}; choose one an account administers."
            )
        return chat


class BotAdminDoneSerializer(serializers.Serializer):
    message = serializers.CharField(help_text="What was done, e.g. “@stash_bot is now an admin of Archive, by …”.")


class BotAdminView(ScopeAndRole, APIView):
    @extend_schema(
        summary="Make the bot an admin of a channel (the archive channel), by an account that posts there",
        request=BotAdminSerializer,
        responses={
            200: BotAdminDoneSerializer,
            400: BAD_REQUEST,
            409: OpenApiResponse(
                ErrorSerializer,
                description="Not now: the bot has not started yet (it learns its @username then), or the account "
                "must log in again.",
            ),
            502: OpenApiResponse(ErrorSerializer, description="Telegram refused; `message` says why."),
        },
    )
    def post(self, request):
        data = BotAdminSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        return Response({"message": services.bot_make_admin(chat_id=data.validated_data["chat"].pk)})


class BotPersonSerializer(serializers.ModelSerializer):
    sends_today = serializers.IntegerField(read_only=True, help_text="Packages sent to them in the last 24 hours.")
    subscription_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = BotPerson
        fields = [
            "user_id",
            "first_name",
            "username",
            "blocked",
            "member_of",
            "member_checked_at",
            "sends_today",
            "subscription_count",
            "first_seen_at",
            "last_seen_at",
        ]
        read_only_fields = [name for name in fields if name != "blocked"]
        extra_kwargs = {
            "user_id": {"help_text": "Their Telegram user id."},
            "blocked": {"help_text": "A blocked person is answered “You can't use this bot” and told nothing."},
            "member_of": {
                "help_text": 'For "members of chosen chats": the chosen chat Telegram last said they are in, "" for '
                "none (or not asked yet: `member_checked_at` null)."
            },
        }


class BotPersonBlockSerializer(serializers.Serializer):
    blocked = serializers.BooleanField()


@extend_schema_view(
    list=extend_schema(summary="The people who wrote to the bot, last seen first"),
    retrieve=extend_schema(summary="One person who wrote to the bot, by Telegram user id"),
    partial_update=extend_schema(
        summary="Block or unblock a person",
        request=BotPersonBlockSerializer,
        responses={200: BotPersonSerializer, 400: BAD_REQUEST},
    ),
)
class BotPersonViewSet(
    ScopeAndRole, mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.UpdateModelMixin, viewsets.GenericViewSet
):
    serializer_class = BotPersonSerializer
    lookup_field = "user_id"
    lookup_value_regex = "[0-9]+"
    http_method_names = ["get", "patch", "head", "options"]

    def get_queryset(self):
        return selectors.bot_people()

    def partial_update(self, request, user_id=None):
        person = self.get_object()
        data = BotPersonBlockSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.bot_person_block(user_id=person.user_id, blocked=data.validated_data["blocked"])
        return Response(BotPersonSerializer(self.get_queryset().get(pk=person.pk)).data)

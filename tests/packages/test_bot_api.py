"""The bot's settings in the API (/api/bot/): what the Bot page changes, read by anyone logged in, changed by
operators with a write token or a session; the token is set, never read back; bad input is answered in words;
every change is in the audit trail without the token."""

import threading
import time

import pytest
from django.contrib.auth.models import Group
from django.db import connection, transaction
from django.test import Client

from accounts.models import AccountChat, Chat
from core.audit import HIDDEN
from core.crypto import seal, unseal
from core.models import AuditChange, AuditEntry
from core.roles import OPERATORS_GROUP, VIEWER_MESSAGE
from core.tokens import READ_ONLY_MESSAGE, api_token_create
from packages.bot.api import TOKEN_EMPTY
from packages.bot.services import MEMBER_CHATS_MISSING, bot_settings_get, bot_settings_update
from packages.models import BotPerson, BotSettings
from telegram.sandbox import bots
from telegram.sandbox.world import chat_access_hash
from tests.support import factories
from tests.support.bots import bot_messages, until, with_bot

pytestmark = pytest.mark.django_db
URL = "/api/bot/"
TOKEN = "7000001:AAEsecret"


@pytest.fixture
def vera(django_user_model):
    user = django_user_model.objects.create_user("vera", password="s3cret-pass")
    user.groups.add(Group.objects.get_or_create(name=OPERATORS_GROUP)[0])
    return user


@pytest.fixture
def chats():
    """A channel and a supergroup of an account (choices for "members of chosen chats"), and a chat of nobody's."""
    account = factories.account("+15550000001")
    club = Chat.objects.create(telegram_id=3101, title="Print Club", type="channel")
    lounge = Chat.objects.create(telegram_id=3102, title="Lounge", type="supergroup")
    Chat.objects.create(telegram_id=3103, title="Nobody's", type="channel")
    for chat in (club, lounge):
        AccountChat.objects.create(account=account, chat=chat)
    return club, lounge


def by_token(owner, scope: str) -> Client:
    _, secret = api_token_create(owner=owner, name="bot script", scope=scope)
    return Client(HTTP_AUTHORIZATION=f"Token {secret}")


def patch(client: Client, body) -> dict:
    response = client.patch(URL, body, content_type="application/json")
    return {"status": response.status_code, **response.json()}


def test_an_operator_turns_the_bot_on_with_a_token_that_is_never_returned(vera):
    client = by_token(vera, "write")
    assert client.get(URL).json() | {"updated_at": None} == {
        "enabled": False,
        "token_set": False,
        "token_from": "",
        "username": "",
        "audience": "allow_list",
        "allowed_user_ids": [],
        "member_chats": [],
        "member_chat_choices": [],
        "sends_per_day": 20,
        "updated_at": None,
    }

    changed = client.patch(
        URL,
        {"enabled": True, "token": TOKEN, "allowed_user_ids": [7002, 7001, 7002], "sends_per_day": 5},
        content_type="application/json",
    )
    assert changed.status_code == 200, changed.content
    assert TOKEN not in changed.content.decode() and "AAEsecret" not in changed.content.decode()
    shown = changed.json()
    assert "token" not in shown
    assert (shown["enabled"], shown["token_set"], shown["token_from"]) == (True, True, "the console")
    assert (shown["allowed_user_ids"], shown["sends_per_day"]) == ([7001, 7002], 5)
    bot = BotSettings.objects.get()
    assert unseal(bot.token_sealed) == TOKEN
    assert client.get(URL).json() == shown

    kept = patch(client, {"enabled": False})
    assert (kept["status"], kept["enabled"], kept["token_set"], kept["sends_per_day"]) == (200, False, True, 5)
    assert unseal(BotSettings.objects.get().token_sealed) == TOKEN, "a PATCH without a token keeps the stored one"


def test_the_environments_token_is_said_to_be_set_and_not_shown(api, settings):
    settings.TELEGRAM_BOT_TOKEN = TOKEN
    response = api.get(URL)
    assert (response.json()["token_set"], response.json()["token_from"]) == (True, "TELEGRAM_BOT_TOKEN")
    assert "AAEsecret" not in response.content.decode()


def test_members_of_chosen_chats_are_chosen_by_telegram_id(api, chats):
    club, lounge = chats
    assert api.get(URL).json()["member_chat_choices"] == [
        {"telegram_id": 3102, "title": "Lounge", "type": "supergroup"},
        {"telegram_id": 3101, "title": "Print Club", "type": "channel"},
    ]
    dana = BotPerson.objects.create(user_id=7001, member_of="Print Club", member_checked_at="2026-11-27T10:00Z")

    shown = api.patch(URL, {"audience": "members", "member_chats": [3101, 3102, 3101]}, format="json").json()
    assert (shown["audience"], shown["member_chats"]) == ("members", [3101, 3102])
    assert set(BotSettings.objects.get().member_chats.all()) == {club, lounge}
    dana.refresh_from_db()
    assert dana.member_checked_at is None, "other chats chosen: every person's membership is asked again"

    assert api.patch(URL, {"sends_per_day": 3}, format="json").json()["member_chats"] == [3101, 3102]
    refused = api.patch(URL, {"member_chats": []}, format="json")
    assert (refused.status_code, refused.json()["message"]) == (400, f"member_chats: {MEMBER_CHATS_MISSING}")
    assert api.patch(URL, {"audience": "everyone", "member_chats": []}, format="json").json()["member_chats"] == []


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"token": "not-a-token"}, "token: A bot token looks like 123456789:AAE…, as BotFather gives it."),
        ({"token": ""}, f"token: {TOKEN_EMPTY}"),
        ({"allowed_user_ids": [7001, "dana"]}, "allowed_user_ids: 1: A valid integer is required."),
        ({"allowed_user_ids": "7001"}, 'allowed_user_ids: Expected a list of items but got type "str".'),
        ({"sends_per_day": -1}, "sends_per_day: Ensure this value is greater than or equal to 0."),
        ({"sends_per_day": 1001}, "sends_per_day: Ensure this value is less than or equal to 1000."),
        ({"audience": "nobody"}, 'audience: "nobody" is not a valid choice.'),
        ({"audience": "members"}, f"member_chats: {MEMBER_CHATS_MISSING}"),
        (
            {"audience": "members", "member_chats": [3101, 3103, 2**63]},
            "member_chats: 2: Ensure this value is less than or equal to 9223372036854775807.",
        ),
        (
            {"audience": "members", "member_chats": [3101, 3103, 99]},
            "member_chats: Not a channel or supergroup of the accounts: 3103, 99. Choose among "
            "`member_chat_choices` (refresh an account's chats if one is missing).",
        ),
        ({"enabled": "perhaps"}, "enabled: Must be a valid boolean."),
        ([{"enabled": True}], "Invalid data. Expected a dictionary, but got list."),
    ],
)
def test_bad_settings_are_answered_in_words_and_change_nothing(api, chats, body, message):
    response = api.patch(URL, body, format="json")
    assert response.status_code == 400
    assert response.json()["message"] == message
    bot = bot_settings_get()
    assert (bot.enabled, bot.token_sealed, bot.audience, list(bot.member_chats.all())) == (False, "", "allow_list", [])


def test_viewers_and_read_tokens_read_and_change_nothing(vera, django_user_model):
    bot_settings_update(enabled=True, token=TOKEN, audience="everyone", allowed_user_ids=[], sends_per_day=5)
    viewer = Client()
    viewer.force_login(django_user_model.objects.create_user("victor", password="s3cret-pass"))
    assert viewer.get(URL).json()["audience"] == "everyone"
    refused = patch(viewer, {"enabled": False})
    assert refused == {"status": 403, "message": VIEWER_MESSAGE}

    reader = by_token(vera, "read")
    assert reader.get(URL).status_code == 200
    assert patch(reader, {"enabled": False}) == {"status": 403, "message": READ_ONLY_MESSAGE}
    assert BotSettings.objects.get().enabled is True

    anonymous = Client().get(URL)
    assert anonymous.status_code in (401, 403) and anonymous.json()["message"]


@pytest.mark.django_db(transaction=True)  # the trail keeps what was committed
def test_a_change_is_in_the_audit_trail_naming_the_token_and_never_the_bot_token(vera, chats):
    bot_settings_get()  # the row as a fresh console has it: the PATCH changes it
    client = by_token(vera, "write")
    patch(client, {"enabled": True, "token": TOKEN, "audience": "members", "member_chats": [3101]})

    entry = AuditEntry.objects.get()
    assert (entry.actor, entry.via, entry.action, entry.status_code) == (
        "vera's token 'bot script'",
        "api",
        "PATCH api-bot",
        200,
    )
    changes = {tuple(change.fields): change.fields for change in entry.changes.filter(kind="packages.BotSettings")}
    settings_change = next(fields for names, fields in changes.items() if "enabled" in names)
    assert settings_change["enabled"] == [False, True]
    assert settings_change["audience"] == ["allow_list", "members"]
    assert settings_change["token_sealed"] == [HIDDEN, HIDDEN]
    assert settings_change["chats"] == [[], ["Print Club"]], "one row, told once: its chats with its fields"
    assert "AAEsecret" not in str(list(AuditChange.objects.values_list("fields", flat=True)))


@pytest.mark.django_db(transaction=True)
def test_the_bot_follows_the_rule_set_through_the_api(api, sandbox):
    """Set through the API, "members of chosen chats" lets a member in and tells a stranger why not."""
    world = sandbox(
        {
            "accounts": [{"phone": "+15550000001"}],
            "bots": [{"id": 7000001, "username": "stash_bot", "token": "7000001:TEST", "admin_of": [3101]}],
            "chats": [
                {"id": 3101, "title": "Print Club", "type": "channel", "admins": ["+15550000001"], "people": [7001]},
                {"id": 7001, "title": "Dana", "type": "user"},
                {"id": 7002, "title": "Evan", "type": "user"},
            ],
        }
    )
    AccountChat.objects.create(
        account=factories.account("+15550000001"),
        chat=Chat.objects.create(telegram_id=3101, title="Print Club", type="channel"),
    )
    body = {"enabled": True, "token": "7000001:TEST", "audience": "members", "member_chats": [3101]}
    assert api.patch(URL, body, format="json").status_code == 200

    async def scenario():
        for user_id in (7001, 7002):
            bots.person_says(world, user_id=user_id, username="@stash_bot", text="/start")
        return [await until(lambda user_id=user_id: bot_messages(world, user_id)) for user_id in (7001, 7002)]

    (dana,), (evan,) = with_bot(scenario, "7000001:TEST")
    assert "/search" in dana["text"]
    assert evan["text"] == "This bot is for members of Print Club. Join one of them, then write again."


def test_people_who_wrote_are_listed_and_an_operator_blocks_one(api, vera, django_user_model):
    BotPerson.objects.create(user_id=7001, first_name="Dana", username="dana_prints", member_of="Print Club")
    BotPerson.objects.create(user_id=7002, first_name="Finn")
    listed = api.get("/api/bot/people/").json()
    assert [(p["user_id"], p["username"], p["member_of"], p["blocked"]) for p in listed["results"]] == [
        (7002, "", "", False),
        (7001, "dana_prints", "Print Club", False),
    ]

    blocked = api.patch("/api/bot/people/7001/", {"blocked": True}, format="json")
    assert (blocked.status_code, blocked.json()["blocked"]) == (200, True)
    assert BotPerson.objects.get(user_id=7001).blocked is True
    assert api.patch("/api/bot/people/7001/", {"blocked": False}, format="json").json()["blocked"] is False

    refused = api.patch("/api/bot/people/7001/", {"blocked": "perhaps"}, format="json")
    assert (refused.status_code, refused.json()["message"]) == (400, "blocked: Must be a valid boolean.")
    unknown = api.patch("/api/bot/people/7009/", {"blocked": True}, format="json")
    assert unknown.status_code == 404 and unknown.json()["message"]
    assert api.put("/api/bot/people/7001/", {"blocked": True}, format="json").status_code == 405

    viewer = Client()
    viewer.force_login(django_user_model.objects.create_user("victor", password="s3cret-pass"))
    assert viewer.get("/api/bot/people/7001/").json()["first_name"] == "Dana"
    assert patch_person(viewer, {"blocked": True}) == {"status": 403, "message": VIEWER_MESSAGE}
    assert patch_person(by_token(vera, "read"), {"blocked": True}) == {"status": 403, "message": READ_ONLY_MESSAGE}
    assert BotPerson.objects.get(user_id=7001).blocked is False


def patch_person(client: Client, body) -> dict:
    response = client.patch("/api/bot/people/7001/", body, content_type="application/json")
    return {"status": response.status_code, **response.json()}


@pytest.mark.django_db(transaction=True)  # the trail keeps what was committed
def test_a_block_is_in_the_audit_trail(vera):
    BotPerson.objects.create(user_id=7001, first_name="Dana")
    patch_person(by_token(vera, "write"), {"blocked": True})
    change = AuditChange.objects.get(kind="packages.BotPerson")
    assert (change.entry.actor, change.object_repr, change.fields) == (
        "vera's token 'bot script'",
        "Dana",
        {"blocked": [False, True]},
    )


def test_an_operator_makes_the_bot_an_admin_of_the_archive_channel(api, sandbox):
    phone = "+15550000001"
    world = sandbox(
        {
            "accounts": [{"phone": phone}],
            "bots": [{"id": 7000001, "username": "stash_bot", "token": "7000001:TEST"}],
            "chats": [{"id": 3001, "title": "Archive", "type": "channel", "admins": [phone]}],
        }
    )
    account = factories.account(phone, session_sealed=seal(world.session_issue(phone)))
    AccountChat.objects.create(
        account=account,
        chat=Chat.objects.create(telegram_id=3001, title="Archive", type="channel"),
        can_post=True,
        access_hash=chat_access_hash(phone=phone, chat_id=3001, type="channel"),
    )
    bot_settings_get()

    refused = api.post("/api/bot/admin/", {"chat": 3001}, format="json")
    assert (refused.status_code, refused.json()["message"]) == (
        409,
        "Turn the bot on first: it learns its @username when it starts.",
    )
    unknown = api.post("/api/bot/admin/", {"chat": 3002}, format="json")
    assert (unknown.status_code, unknown.json()["message"]) == (
        400,
        "chat: No logged-in account posts in a channel 3002; choose one an account administers.",
    )

    BotSettings.objects.filter(pk=1).update(username="stash_bot")
    done = api.post("/api/bot/admin/", {"chat": 3001}, format="json")
    assert (done.status_code, done.json()) == (200, {"message": f"@stash_bot is now an admin of Archive, by {phone}."})
    assert world.membership(3001, "bot:7000001") == "admin"


@pytest.mark.django_db(transaction=True)
def test_a_patch_waits_for_a_change_in_flight_and_keeps_it(api):
    """Two changes at once, of different fields: the PATCH reads the row after the other change is committed, so
    neither is lost."""
    bot_settings_get()
    locked, answered = threading.Event(), []

    def other_change():
        with transaction.atomic():
            bot = BotSettings.objects.select_for_update().get(pk=1)
            locked.set()
            time.sleep(2)  # the PATCH arrives meanwhile
            bot.sends_per_day = 7
            bot.save()
        connection.close()

    def patch_enabled():
        answered.append(api.patch(URL, {"enabled": True}, format="json").json())
        connection.close()

    other = threading.Thread(target=other_change)
    other.start()
    locked.wait(5)
    patching = threading.Thread(target=patch_enabled)
    patching.start()
    for thread in (other, patching):
        thread.join(30)
    assert (answered[0]["enabled"], answered[0]["sends_per_day"]) == (True, 7)
    bot = BotSettings.objects.get()
    assert (bot.enabled, bot.sends_per_day) == (True, 7)

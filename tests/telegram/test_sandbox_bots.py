"""Bots in the sandbox: a real Telethon client logged in with a bot token gets what people say and press pushed
to its connection, answers with inline keyboards, and sends on a document of a channel it administers; it may
write only to people who wrote to it first."""

import asyncio
import io
import json

import pytest
from django.core.management import CommandError, call_command
from telethon import errors, functions, types

from telegram.errors import AuthRequired, TargetForbidden
from telegram.gateway import open_bot
from telegram.records import ChatRef
from telegram.sandbox import bots, tl
from telegram.sandbox.loader import world_load
from telegram.sandbox.world import World, WorldError

TOKEN = "7000001:TEST"
DANA, EVAN = 7001, 7002
WORLD = {
    "accounts": [{"phone": "+15550000001"}],
    "bots": [{"id": 7000001, "username": "stash_bot", "token": TOKEN, "admin_of": [3001]}],
    "chats": [
        {
            "id": 3001,
            "title": "Archive",
            "type": "channel",
            "role": "destination",
            "admins": ["+15550000001"],
            "messages": [{"id": 30, "text": "dragon.zip", "document": {"name": "dragon.zip", "size": 5000}}],
        },
        {
            "id": 3002,
            "title": "Elsewhere",
            "type": "channel",
            "admins": ["+15550000001"],
            "messages": [{"id": 5, "document": {"name": "secret.zip", "size": 100}}],
        },
        {"id": DANA, "title": "Dana", "type": "user", "username": "dana_prints"},
        {"id": EVAN, "title": "Evan", "type": "user"},
    ],
}


def wait_for(read, *, seconds: float = 10):
    async def poll():
        for _ in range(int(seconds / 0.05)):
            found = read()
            if found:
                return found
            await asyncio.sleep(0.05)
        raise AssertionError("nothing came in time")

    return poll()


def dump(world: World, user_id: int) -> list[dict]:
    found = bots.conversations(world, user_id)
    return found[0]["messages"] if found else []


def run_bot(world: World, scenario):
    """Run `scenario(bot)` with a bot that answers /start with a button and sends dragon.zip on its press."""

    async def main():
        async with open_bot(token=TOKEN) as bot:

            async def on_message(message):
                if message.text == "/start":
                    await bot.send_text(
                        message.user_id, f"Hello {message.first_name}", buttons=[[("Send me", b"send:30")]]
                    )

            async def on_press(press):
                await bot.answer_press(press.query_id, "On its way")
                await bot.send_copy(
                    press.user_id, ChatRef(id=3001), int(press.data.split(b":")[1]), caption="A red dragon"
                )

            bot.on_message(on_message)
            bot.on_press(on_press)
            return await scenario(bot)

    return asyncio.run(main())


@pytest.mark.django_db(transaction=True)
def test_a_person_writes_and_the_bot_answers_through_its_update_loop(sandbox):
    world = sandbox(WORLD)

    async def scenario(bot):
        assert (bot.user_id, bot.username) == (7000001, "stash_bot")
        bots.person_says(world, user_id=DANA, username="@stash_bot", text="/start")
        return await wait_for(lambda: [m for m in dump(world, DANA) if m["from"] == "bot"])

    answers = run_bot(world, scenario)

    assert answers == [
        {
            "id": 2,
            "from": "bot",
            "date": answers[0]["date"],
            "text": "Hello Dana",
            "buttons": [["Send me"]],
            "document": None,
        }
    ]


@pytest.mark.django_db(transaction=True)
def test_a_pressed_button_is_answered_and_the_channels_document_sent(sandbox):
    world = sandbox(WORLD)

    async def scenario(bot):
        bots.person_says(world, user_id=DANA, username="stash_bot", text="/start")
        card = (await wait_for(lambda: [m for m in dump(world, DANA) if m["from"] == "bot"]))[0]
        query_id = bots.person_presses(
            world, user_id=DANA, username="stash_bot", message_id=card["id"], button="Send me"
        )
        await wait_for(lambda: [m for m in dump(world, DANA) if m["document"]])
        return query_id

    query_id = run_bot(world, scenario)

    assert bots.callback(world, query_id)["answer"] == "On its way"
    sent = dump(world, DANA)[-1]
    assert (sent["from"], sent["document"], sent["text"]) == ("bot", "dragon.zip", "A red dragon"), "not the channel's"


@pytest.mark.django_db(transaction=True)
def test_a_bot_writes_only_to_people_who_wrote_first_and_sends_only_what_it_sees(sandbox):
    world = sandbox(WORLD)

    async def scenario(bot):
        client = bot._client
        evan = types.InputPeerUser(EVAN, tl.access_hash("user", bots.bot_phone(7000001), EVAN))
        with pytest.raises(errors.PeerIdInvalidError):
            await client(functions.messages.SendMessageRequest(peer=evan, message="hi", random_id=1))
        bots.person_says(world, user_id=DANA, username="stash_bot", text="hello")
        await wait_for(lambda: bot._client.session.get_entity_rows_by_id(DANA))
        with pytest.raises(TargetForbidden):
            await bot.send_copy(DANA, ChatRef(id=3002), 5, caption="")
        return True

    assert run_bot(world, scenario)
    assert [m["from"] for m in dump(world, DANA)] == ["person"]
    assert dump(world, EVAN) == []


@pytest.mark.django_db(transaction=True)
def test_a_wrong_token_is_refused(sandbox, settings):
    sandbox(WORLD)

    async def main():
        async with open_bot(token="7000001:WRONG"):
            pass

    with pytest.raises(AuthRequired):
        asyncio.run(main())


def test_the_world_file_checks_its_bots(tmp_path):
    bad = [
        {"id": 1, "username": "stash", "token": "1:x"},
        {"id": 1, "username": "stash_bot", "token": "2:x"},
        {"id": 1, "username": "stash_bot", "token": "1:x", "admin_of": [999]},
    ]
    for spec in bad:
        with pytest.raises(WorldError):
            world_load(tmp_path, {**WORLD, "bots": [spec]})


def test_the_commands_say_press_and_dump(sandbox):
    world = sandbox(WORLD)
    call_command("sandbox_say", str(DANA), "@stash_bot", "/search", "dragon", stdout=(out := io.StringIO()))
    assert json.loads(out.getvalue()) == {"message_id": 1}
    with world.transaction() as conn:  # as the bot would answer: a card with a button
        conn.execute(
            "INSERT INTO bot_messages VALUES (7000001, 2, ?, 1, 0, 'dragon.zip', ?, NULL, NULL)",
            (DANA, json.dumps([[{"text": "Send me", "data": "01"}]])),
        )
    with pytest.raises(CommandError, match="no button"):
        call_command("sandbox_press", str(DANA), "@stash_bot", "2", "Nope")

    with pytest.raises(CommandError, match="no person"):
        call_command("sandbox_say", "3001", "@stash_bot", "hi")

    call_command("sandbox_dump", str(DANA), "--json", stdout=(out := io.StringIO()))
    conversation = json.loads(out.getvalue())["bots"]
    assert [(c["bot"], [(m["from"], m["text"], m["buttons"]) for m in c["messages"]]) for c in conversation] == [
        ("@stash_bot", [("person", "/search dragon", []), ("bot", "dragon.zip", [["Send me"]])])
    ]


@pytest.mark.django_db(transaction=True)
def test_get_participant_answers_a_bot_as_telegram_does(sandbox):
    """channels.getParticipant: a person in a channel the bot administers or a supergroup it is in; someone not
    (or no longer) in it; CHAT_ADMIN_REQUIRED in a broadcast channel it only reads; CHANNEL_PRIVATE outside."""
    world = sandbox(
        {
            **WORLD,
            "chats": [
                {**WORLD["chats"][0], "people": [DANA]},
                {**WORLD["chats"][1], "people": [DANA]},
                {"id": 3003, "title": "Lounge", "type": "supergroup", "admins": ["+15550000001"], "people": [EVAN]},
                *WORLD["chats"][2:],
            ],
        }
    )
    with world.transaction() as conn:  # the bot reads Elsewhere (not an admin) and is in the Lounge
        conn.executemany("INSERT INTO chat_members VALUES (?, 'bot:7000001', 0)", [(3002,), (3003,)])

    async def scenario(bot):
        for person in (DANA, EVAN):
            bots.person_says(world, user_id=person, username="stash_bot", text="hello")
        await wait_for(lambda: bot._client.session.get_entity_rows_by_id(EVAN))
        found = {
            "dana in archive": await bot.is_member(ChatRef(id=3001), DANA),
            "evan in archive": await bot.is_member(ChatRef(id=3001), EVAN),
            "evan in lounge": await bot.is_member(ChatRef(id=3003, type="supergroup"), EVAN),
        }
        bots.person_leaves(world, chat_id=3001, user_id=DANA)
        found["dana after leaving"] = await bot.is_member(ChatRef(id=3001), DANA)
        with pytest.raises(TargetForbidden) as not_admin:
            await bot.is_member(ChatRef(id=3002), DANA)
        found["elsewhere"] = not_admin.value.rpc
        world.conn.execute("DELETE FROM chat_members WHERE chat_id = 3003 AND phone = 'bot:7000001'")
        world.conn.commit()
        with pytest.raises(TargetForbidden) as outside:
            await bot.is_member(ChatRef(id=3003, type="supergroup"), EVAN)
        found["lounge, the bot gone"] = outside.value.rpc
        return found

    assert run_bot(world, scenario) == {
        "dana in archive": True,
        "evan in archive": False,
        "evan in lounge": True,
        "dana after leaving": False,
        "elsewhere": "CHAT_ADMIN_REQUIRED",
        "lounge, the bot gone": "CHANNEL_PRIVATE",
    }


def test_the_world_file_checks_chat_people(tmp_path):
    with pytest.raises(WorldError, match="'people' must name chats of type 'user'"):
        world_load(tmp_path, {**WORLD, "chats": [{**WORLD["chats"][0], "people": [12345]}, *WORLD["chats"][1:]]})
    with pytest.raises(WorldError, match="'people' are for channels and supergroups"):
        world_load(tmp_path, {**WORLD, "chats": [*WORLD["chats"][:2], {**WORLD["chats"][2], "people": [EVAN]}]})

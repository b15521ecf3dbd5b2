"""messages.editMessage on the sandbox server through Telethon, answered as Telegram does: only the account's
own messages, MESSAGE_NOT_MODIFIED for the same content, MESSAGE_ID_INVALID for a message gone, and
MESSAGE_EDIT_TIME_EXPIRED outside channels after 48 hours; `sandbox_dump --json` shows `edit_date`."""

import io
import json
import time

import pytest
from django.core.management import call_command
from telethon import errors, functions, types

from telegram.errors import NotFound, TargetForbidden, TelegramError
from telegram.formatting import text_format
from telegram.records import ChatRef
from telegram.sandbox.world import chat_access_hash
from tests.support.reminders import png_bytes

WRITER, MEMBER = "+15550000001", "+15550000003"
WORLD = {
    "accounts": [{"phone": WRITER}, {"phone": MEMBER}],
    "chats": [
        {"id": 3001, "title": "Channel", "type": "channel", "admins": [WRITER], "members": [MEMBER]},
        {"id": 4001, "title": "Group", "type": "group", "members": [WRITER, MEMBER]},
    ],
}
CHANNEL = ChatRef(id=3001, access_hash=chat_access_hash(phone=WRITER, chat_id=3001, type="channel"), type="channel")
GROUP = ChatRef(id=4001, access_hash=0, type="group")


def dump(chat_id: int) -> list[dict]:
    out = io.StringIO()
    call_command("sandbox_dump", str(chat_id), "--json", stdout=out)
    return json.loads(out.getvalue())["messages"]


def send(sandbox_run, world, phone: str, chat: ChatRef, text: str, random_id: int):
    return sandbox_run(world, phone, lambda gateway: gateway.send_message(chat, random_id=random_id, text=text))


def test_an_edit_changes_text_and_entities_and_sandbox_dump_shows_its_date(sandbox, sandbox_run, sandbox_clock):
    world = sandbox(WORLD)
    start = time.time()
    sandbox_clock(start)
    sent = send(sandbox_run, world, WRITER, CHANNEL, "Week 1", 1)
    assert dump(3001)[0]["edit_date"] is None
    formatted = text_format("**Week 2**", format="markdown")

    sandbox_clock(start + 60)
    sandbox_run(
        world,
        WRITER,
        lambda gateway: gateway.edit_message(CHANNEL, sent.id, text=formatted.text, entities=formatted.entities),
    )

    [message] = dump(3001)
    assert (message["id"], message["text"]) == (sent.id, "Week 2")
    assert message["entities"] == [{"type": "bold", "offset": 0, "length": 6}]
    assert message["edit_date"] is not None and message["edit_date"] > message["date"]


def test_the_same_content_again_is_message_not_modified(sandbox, sandbox_run):
    world = sandbox(WORLD)
    sent = send(sandbox_run, world, WRITER, CHANNEL, "Week 1", 1)
    peer = types.InputPeerChannel(channel_id=CHANNEL.id, access_hash=CHANNEL.access_hash)

    with pytest.raises(errors.MessageNotModifiedError):
        sandbox_run(
            world,
            WRITER,
            lambda gateway: gateway._client(
                functions.messages.EditMessageRequest(peer=peer, id=sent.id, message="Week 1")
            ),
        )
    # the gateway takes it as done: an edit retried after a crash
    sandbox_run(world, WRITER, lambda gateway: gateway.edit_message(CHANNEL, sent.id, text="Week 1"))
    assert dump(3001)[0]["edit_date"] is None


def test_a_message_gone_or_anothers_cannot_be_edited(sandbox, sandbox_run):
    world = sandbox(WORLD)
    mine = send(sandbox_run, world, WRITER, GROUP, "mine", 1)
    theirs = send(sandbox_run, world, MEMBER, GROUP, "theirs", 2)
    sandbox_run(world, WRITER, lambda gateway: gateway.delete_messages(GROUP, [mine.id]))

    with pytest.raises(NotFound) as gone:
        sandbox_run(world, WRITER, lambda gateway: gateway.edit_message(GROUP, mine.id, text="edited"))
    with pytest.raises(TargetForbidden) as other:
        sandbox_run(world, WRITER, lambda gateway: gateway.edit_message(GROUP, theirs.id, text="edited"))

    assert (gone.value.rpc, other.value.rpc) == ("MESSAGE_ID_INVALID", "MESSAGE_AUTHOR_REQUIRED")
    assert [m["text"] for m in dump(4001)] == ["theirs"]


def test_outside_channels_an_edit_expires_after_48_hours(sandbox, sandbox_run, sandbox_clock):
    world = sandbox(WORLD)
    start = time.time()
    sandbox_clock(start)
    in_group = send(sandbox_run, world, WRITER, GROUP, "group", 1)
    in_channel = send(sandbox_run, world, WRITER, CHANNEL, "channel", 2)

    sandbox_clock(start + 48 * 3600 - 1)
    sandbox_run(world, WRITER, lambda gateway: gateway.edit_message(GROUP, in_group.id, text="group, edited"))
    sandbox_clock(start + 48 * 3600 + 1)
    with pytest.raises(TelegramError) as expired:
        sandbox_run(world, WRITER, lambda gateway: gateway.edit_message(GROUP, in_group.id, text="too late"))
    sandbox_run(world, WRITER, lambda gateway: gateway.edit_message(CHANNEL, in_channel.id, text="channel, edited"))

    assert expired.value.rpc == "MESSAGE_EDIT_TIME_EXPIRED"
    assert [m["text"] for m in dump(4001)] == ["group, edited"]
    assert [m["text"] for m in dump(3001)] == ["channel, edited"]


def test_an_edit_replaces_the_media_and_its_caption(sandbox, sandbox_run, tmp_path):
    world = sandbox(WORLD)
    first, second = tmp_path / "week1.png", tmp_path / "week2.png"
    first.write_bytes(png_bytes(seed=1))
    second.write_bytes(png_bytes(seed=2))

    async def post_then_edit(gateway):
        old = await gateway.upload_media(path=str(first), file_name="week1.png", mime_type="image/png")
        new = await gateway.upload_media(path=str(second), file_name="week2.png", mime_type="image/png")
        sent = await gateway.send_message(CHANNEL, random_id=1, text="Week 1", media=old)
        await gateway.edit_message(CHANNEL, sent.id, text="Week 2", media=new)
        return sent

    sent = sandbox_run(world, WRITER, post_then_edit)

    [message] = dump(3001)
    assert (message["id"], message["text"]) == (sent.id, "Week 2")
    assert message["photo"]["size"] == second.stat().st_size and message["edit_date"] is not None

"""A basic group upgraded to a supergroup, as Telegram does it (messages.migrateChat): the old group is
deactivated and names its supergroup (Chat.migrated_to, an InputChannel with this account's access hash); posting
in it is answered CHAT_ID_INVALID; the gateway follows it to the supergroup, or says the account is not there."""

import io

import pytest
from django.core.management import CommandError, call_command

from telegram.errors import TargetForbidden
from telegram.records import SUPERGROUP
from telegram.sandbox.loader import WorldError
from tests.support.sandbox import ref

MEMBER, OUTSIDER = "+15550000001", "+15550000002"
WORLD = {
    "accounts": [{"phone": MEMBER}, {"phone": OUTSIDER}],
    "chats": [
        {"id": 5001, "title": "Club", "type": "group", "members": [MEMBER, OUTSIDER]},
        {"id": 5002, "title": "Club (supergroup)", "type": "supergroup", "members": [MEMBER], "slow_mode_seconds": 30},
        {"id": 5003, "title": "Plain", "type": "group", "members": [MEMBER]},
        {"id": 5004, "title": "Upgraded long ago", "type": "group", "members": [MEMBER], "migrated_to": 5002},
        {"id": 5005, "title": "Deleted", "type": "group", "members": [MEMBER], "deactivated": True},
    ],
}


def group(phone: str, chat_id: int):
    return ref(phone, chat_id, type="group")


def test_a_migrated_group_refuses_posts_and_names_its_supergroup(sandbox, sandbox_run):
    world = sandbox(WORLD)
    world.chat_migrate(5001, 5002)

    async def follow(gateway):
        with pytest.raises(TargetForbidden) as refused:
            await gateway.send_message(group(MEMBER, 5001), random_id=1, text="hello")
        return refused.value, await gateway.chat_migrated_to(group(MEMBER, 5001))

    refused, supergroup = sandbox_run(world, MEMBER, follow)

    assert refused.rpc == "CHAT_ID_INVALID"
    assert (supergroup.id, supergroup.type, supergroup.title, supergroup.slow_mode_seconds) == (
        5002,
        SUPERGROUP,
        "Club (supergroup)",
        30,
    )
    assert supergroup.ref == ref(MEMBER, 5002, type=SUPERGROUP), "addressed by this account's own access hash"

    async def post(gateway):
        return await gateway.send_message(supergroup.ref, random_id=1, text="hello")

    assert sandbox_run(world, MEMBER, post).chat_id == 5002
    assert [m["text"] for m in world.chat_dump(5001)["messages"]] == []


def test_a_group_that_did_not_migrate_or_was_deleted_names_nothing_one_migrated_in_the_world_file_does(
    sandbox, sandbox_run
):
    world = sandbox(WORLD)

    async def look(gateway):
        with pytest.raises(TargetForbidden) as refused:
            await gateway.send_message(group(MEMBER, 5005), random_id=1, text="hello")
        assert refused.value.rpc == "CHAT_ID_INVALID"
        return [await gateway.chat_migrated_to(group(MEMBER, chat_id)) for chat_id in (5001, 5003, 5004, 5005)]

    assert [info and info.id for info in sandbox_run(world, MEMBER, look)] == [None, None, 5002, None]


def test_a_supergroup_the_account_is_not_in_is_forbidden(sandbox, sandbox_run):
    world = sandbox(WORLD)
    world.chat_migrate(5001, 5002)

    async def look(gateway):
        return await gateway.chat_migrated_to(group(OUTSIDER, 5001))

    with pytest.raises(TargetForbidden) as forbidden:
        sandbox_run(world, OUTSIDER, look)
    assert forbidden.value.rpc == "CHANNEL_PRIVATE"


def test_only_a_group_migrates_and_only_to_a_supergroup_of_the_world(sandbox):
    with pytest.raises(WorldError, match="'migrated_to' must name a supergroup"):
        sandbox({**WORLD, "chats": [*WORLD["chats"][:1], {**WORLD["chats"][2], "migrated_to": 5001}]})
    world = sandbox(WORLD)
    with pytest.raises(WorldError, match="not a supergroup"):
        world.chat_migrate(5001, 5003)


def test_the_command_migrates_a_group_of_the_running_world(sandbox):
    world = sandbox(WORLD)
    out = io.StringIO()

    call_command("sandbox_migrate", "5001", "5002", stdout=out)

    assert out.getvalue().strip() == "Group 5001 migrated to supergroup 5002."
    assert world.chat(5001)["migrated_to"] == 5002
    with pytest.raises(CommandError, match="not a basic group"):
        call_command("sandbox_migrate", "5002", "5001")

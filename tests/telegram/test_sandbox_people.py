"""People in the sandbox: a world-file chat of type `user` is a person some accounts have a private chat with.
They list the person in their dialogs, and copies and messages sent to them land in that private chat;
an account without one is answered PEER_ID_INVALID, as Telegram answers it."""

import pytest

from telegram.errors import TargetForbidden
from telegram.records import ChatInfo, ChatRef
from telegram.sandbox.loader import world_load
from telegram.sandbox.world import WorldError, chat_access_hash
from tests.support.sandbox import ref

FRIEND, STRANGER = "+15550000001", "+15550000002"
DANA, EVAN = 7001, 7002
WORLD = {
    "accounts": [{"phone": FRIEND}, {"phone": STRANGER}],
    "chats": [
        {
            "id": 3001,
            "title": "Archive",
            "type": "channel",
            "admins": [FRIEND, STRANGER],
            "messages": [{"id": 30, "text": "dragon.zip #sc1", "document": {"name": "dragon.zip", "size": 5000}}],
        },
        {
            "id": DANA,
            "title": "Dana",
            "type": "user",
            "username": "dana_prints",
            "members": [FRIEND],
            "messages": [{"id": 1, "text": "Could you send me the dragon?"}],
        },
        {"id": EVAN, "title": "Evan", "type": "user", "members": [FRIEND, STRANGER]},
    ],
}


def person(phone: str, user_id: int) -> ChatRef:
    return ref(phone, user_id, type="user")


def test_the_dialogs_list_a_person_with_the_accounts_own_access_hash(sandbox, sandbox_run):
    world = sandbox(WORLD)

    friend = {chat.id: chat for chat in sandbox_run(world, FRIEND, lambda gateway: gateway.list_chats())}
    stranger = {chat.id: chat for chat in sandbox_run(world, STRANGER, lambda gateway: gateway.list_chats())}

    assert friend[DANA] == ChatInfo(
        id=DANA,
        access_hash=chat_access_hash(phone=FRIEND, chat_id=DANA, type="user"),
        title="Dana",
        type="user",
        can_post=True,
        username="dana_prints",
    )
    assert DANA not in stranger, "no private chat with Dana"
    assert friend[EVAN].access_hash != stranger[EVAN].access_hash, "access hashes are per account"
    assert friend[3001].type == "channel"


def test_a_copy_and_a_message_to_a_person_land_in_the_private_chat_once(sandbox, sandbox_run):
    world = sandbox(WORLD)

    async def send(gateway):
        copy = await gateway.copy_message(ref(FRIEND, 3001), 30, person(FRIEND, DANA), random_id=11)
        again = await gateway.copy_message(ref(FRIEND, 3001), 30, person(FRIEND, DANA), random_id=11)
        text = await gateway.send_message(person(FRIEND, DANA), random_id=12, text="Here it is.")
        return copy, again, text, await gateway.get_last_message_ids([person(FRIEND, DANA)])

    copy, again, text, last = sandbox_run(world, FRIEND, send)

    assert (copy.chat_id, copy.id, copy.duplicate) == (DANA, 2, False)
    assert (again.id, again.duplicate) == (None, True), "a retried random_id posts nothing"
    assert text.id == 3 and last == {DANA: 3}
    dump = world.chat_dump(DANA)
    assert dump["chat"] == {"id": DANA, "title": "Dana", "type": "user", "forum": False}
    original = world.chat_dump(3001)["messages"][-1]
    assert [(m["sender"], m["text"], m["document"]) for m in dump["messages"]] == [
        (None, "Could you send me the dragon?", None),  # the person's own
        (FRIEND, "dragon.zip #sc1", original["document"]),
        (FRIEND, "Here it is.", None),
    ]


@pytest.mark.parametrize(
    ("phone", "to"),
    [
        (STRANGER, person(STRANGER, DANA)),  # no private chat with Dana
        (FRIEND, ChatRef(id=DANA, access_hash=12345, type="user")),  # a hash Telegram never gave
        (STRANGER, person(STRANGER, 404)),  # nobody
    ],
)
def test_an_account_without_a_private_chat_with_the_person_is_answered_peer_id_invalid(sandbox, sandbox_run, phone, to):
    world = sandbox(WORLD)

    with pytest.raises(TargetForbidden) as refused:
        sandbox_run(world, phone, lambda gateway: gateway.copy_message(ref(phone, 3001), 30, to, random_id=3))

    assert refused.value.rpc == "PEER_ID_INVALID"
    assert [m["sender"] for m in world.chat_dump(DANA)["messages"]] == [None], "nothing reached Dana"


def test_a_person_named_as_a_channel_is_no_channel(sandbox, sandbox_run):
    world = sandbox(WORLD)
    as_channel = ref(FRIEND, DANA)

    assert sandbox_run(world, FRIEND, lambda gateway: gateway.get_last_message_ids([as_channel])) == {}
    with pytest.raises(TargetForbidden) as refused:
        sandbox_run(world, FRIEND, lambda gateway: gateway.list_topics(as_channel))
    assert refused.value.rpc == "CHANNEL_INVALID"


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"admins": [FRIEND]}, "a person has no admins"),
        ({"role": "source"}, "cannot be a source or the destination"),
        ({"forum": True}, "has no topics"),
        ({"id": 15550000002}, "is the user id of account \\+15550000002"),
        ({"members": ["+19999999999"]}, "not one of the world's accounts"),
    ],
)
def test_a_person_the_world_file_gets_wrong_is_refused_with_the_reason(tmp_path, change, reason):
    chats = [WORLD["chats"][0], {**WORLD["chats"][1], **change}]

    with pytest.raises(WorldError, match=reason):
        world_load(tmp_path / "sandbox", {**WORLD, "chats": chats})

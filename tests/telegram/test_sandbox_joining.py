"""Joining, leaving and creating channels through the Telethon gateway against the sandbox server, which answers
contacts.resolveUsername, messages.checkChatInvite / importChatInvite, channels.joinChannel / leaveChannel,
channels.createChannel, contacts.resolvePhone, channels.inviteToChannel and channels.editAdmin as Telegram does,
and keeps the memberships they make."""

import pytest
from telethon import errors, functions, types

from telegram.errors import FloodWait, LimitReached, NotFound, TargetForbidden
from telegram.records import (
    ALREADY_MEMBER,
    JOINED,
    REQUESTED,
    ChatLink,
    ChatPreview,
)
from tests.support.sandbox import ref

READER, NEWCOMER, SHY = "+15550000001", "+15550000002", "+15550000003"
PUBLIC, PRIVATE_FORUM, CLOSED, GROUP_ID = 4001, 4002, 4003, 4004


def world_file(**limits) -> dict:
    return {
        "limits": limits,
        "accounts": [{"phone": READER}, {"phone": NEWCOMER}, {"phone": SHY, "invites_allowed": False}],
        "chats": [
            {
                "id": PUBLIC,
                "title": "Models A",
                "type": "channel",
                "username": "models_a",
                "other_members": 120,
                "members": [READER],
                "messages": [{"id": 5, "document": {"name": "dragon.zip", "size": 4000}}],
            },
            {
                "id": PRIVATE_FORUM,
                "title": "Prints club",
                "type": "supergroup",
                "forum": True,
                "other_members": 40,
                "members": [READER],
                "invites": [
                    {"hash": "ClubInvite01"},
                    {"hash": "OldInvite001", "expired": True},
                    {"hash": "Revoked00001", "revoked": True},
                ],
            },
            {
                "id": CLOSED,
                "title": "Vetted",
                "type": "channel",
                "username": "vetted_models",
                "join_request": True,
                "invites": [{"hash": "AskFirst0001", "request_needed": True}],
            },
            {"id": GROUP_ID, "title": "Small group", "type": "group", "invites": [{"hash": "GroupInvite1"}]},
        ],
    }


def test_a_public_channel_is_previewed_then_joined_and_later_reads_see_it(sandbox, sandbox_run):
    world = sandbox(world_file())
    link = ChatLink(username="Models_A")  # usernames are case-insensitive

    preview = sandbox_run(world, NEWCOMER, lambda gateway: gateway.preview_chat(link))
    result = sandbox_run(world, NEWCOMER, lambda gateway: gateway.join_chat(link))

    assert preview == ChatPreview(
        title="Models A", type="channel", members_count=121, forum=False, already_member=False, username="models_a"
    )
    assert result.status == JOINED
    assert (result.chat.id, result.chat.type, result.chat.can_post) == (PUBLIC, "channel", False)
    assert result.chat.ref == ref(NEWCOMER, PUBLIC)
    assert world.membership(PUBLIC, NEWCOMER) == "member"
    again = sandbox_run(world, NEWCOMER, lambda gateway: gateway.preview_chat(link))
    assert (again.already_member, again.members_count) == (True, 122)
    chats = sandbox_run(world, NEWCOMER, lambda gateway: gateway.list_chats())
    assert [chat.id for chat in chats] == [PUBLIC]
    last = sandbox_run(world, NEWCOMER, lambda gateway: gateway.get_last_message_ids([ref(NEWCOMER, PUBLIC)]))
    assert last == {PUBLIC: 5}, "a member reads the channel"
    twice = sandbox_run(world, NEWCOMER, lambda gateway: gateway.join_chat(link))
    assert (twice.status, twice.chat.id) == (ALREADY_MEMBER, PUBLIC)
    assert world.stats()["calls"][NEWCOMER]["channels.joinChannel"] == 1, "a member is not joined twice"


def test_an_invite_to_a_private_forum_is_previewed_without_its_forum_flag_and_joined(sandbox, sandbox_run):
    world = sandbox(world_file())
    link = ChatLink(invite_hash="ClubInvite01")

    preview = sandbox_run(world, NEWCOMER, lambda gateway: gateway.preview_chat(link))
    result = sandbox_run(world, NEWCOMER, lambda gateway: gateway.join_chat(link))
    member_preview = sandbox_run(world, NEWCOMER, lambda gateway: gateway.preview_chat(link))
    again = sandbox_run(world, NEWCOMER, lambda gateway: gateway.join_chat(link))

    assert preview == ChatPreview(
        title="Prints club", type="supergroup", members_count=41, forum=None, already_member=False
    ), "Telegram's invite does not say whether it is a forum"
    assert (result.status, result.chat.id, result.chat.forum, result.chat.can_post) == (
        JOINED,
        PRIVATE_FORUM,
        True,
        True,
    )
    assert (member_preview.already_member, member_preview.forum, member_preview.members_count) == (True, True, 42)
    assert (again.status, again.chat.id) == (ALREADY_MEMBER, PRIVATE_FORUM)


@pytest.mark.parametrize(
    ("link", "error", "words"),
    [
        (ChatLink(invite_hash="OldInvite001"), NotFound, "expired or was revoked"),
        (ChatLink(invite_hash="Revoked00001"), NotFound, "expired or was revoked"),
        (ChatLink(invite_hash="NoSuchInvite"), NotFound, "not valid; copy it again"),
        (ChatLink(username="nobody_here"), NotFound, "No channel or group has this @username"),
    ],
)
def test_a_link_that_leads_nowhere_is_refused_in_the_operators_words(sandbox, sandbox_run, link, error, words):
    world = sandbox(world_file())

    for action in (lambda gateway: gateway.preview_chat(link), lambda gateway: gateway.join_chat(link)):
        with pytest.raises(error, match=words):
            sandbox_run(world, NEWCOMER, action)
    assert world.account_chats(NEWCOMER) == []


def test_a_private_channel_cannot_be_joined_by_id_without_its_invite(sandbox, sandbox_run):
    world = sandbox(world_file())
    channel = types.InputChannel(channel_id=PRIVATE_FORUM, access_hash=ref(NEWCOMER, PRIVATE_FORUM).access_hash)

    with pytest.raises(errors.ChannelPrivateError):
        sandbox_run(world, NEWCOMER, lambda gateway: gateway._client(functions.channels.JoinChannelRequest(channel)))
    assert world.membership(PRIVATE_FORUM, NEWCOMER) is None


def test_a_chat_that_approves_members_gets_a_join_request(sandbox, sandbox_run):
    world = sandbox(world_file())

    by_invite = sandbox_run(world, NEWCOMER, lambda gateway: gateway.join_chat(ChatLink(invite_hash="AskFirst0001")))
    preview = sandbox_run(world, READER, lambda gateway: gateway.preview_chat(ChatLink(username="vetted_models")))
    by_name = sandbox_run(world, READER, lambda gateway: gateway.join_chat(ChatLink(username="vetted_models")))

    assert (by_invite.status, by_invite.chat) == (REQUESTED, None)
    assert preview.request_needed
    assert by_name.status == REQUESTED
    assert world.join_requests(CLOSED) == [READER, NEWCOMER]
    assert world.membership(CLOSED, NEWCOMER) is None


def test_an_account_in_too_many_channels_is_told_to_leave_some(sandbox, sandbox_run):
    world = sandbox(world_file(channels_max=1))

    with pytest.raises(LimitReached, match="too many channels and groups.*leave some"):
        sandbox_run(world, READER, lambda gateway: gateway.join_chat(ChatLink(username="vetted_models")))
    group = sandbox_run(world, READER, lambda gateway: gateway.join_chat(ChatLink(invite_hash="GroupInvite1")))
    assert (group.status, group.chat.type) == (JOINED, "group"), "basic groups do not count"


def test_a_flood_wait_on_joining_reaches_the_caller(sandbox, sandbox_run):
    data = world_file()
    data["faults"] = [{"op": "join", "error": "flood_wait", "seconds": 30}]
    world = sandbox(data)

    with pytest.raises(FloodWait) as caught:
        sandbox_run(world, NEWCOMER, lambda gateway: gateway.preview_chat(ChatLink(username="models_a")))
    assert caught.value.seconds == 30


def test_leaving_a_channel_and_a_group_takes_the_account_out_once(sandbox, sandbox_run):
    world = sandbox(world_file())
    group = sandbox_run(world, READER, lambda gateway: gateway.join_chat(ChatLink(invite_hash="GroupInvite1")))

    async def leave_all(gateway):
        return [
            await gateway.leave_chat(ref(READER, PUBLIC)),
            await gateway.leave_chat(group.chat.ref),
            await gateway.leave_chat(ref(READER, PUBLIC)),
        ]

    assert sandbox_run(world, READER, leave_all) == [True, True, False]
    assert world.membership(PUBLIC, READER) is None and world.membership(GROUP_ID, READER) is None
    with pytest.raises(TargetForbidden):
        sandbox_run(world, READER, lambda gateway: gateway.search_documents(ref(READER, PUBLIC), min_id=0))
    assert world.members_count(PUBLIC) == 120


def test_a_created_channel_gets_its_writers_as_posting_admins(sandbox, sandbox_run):
    world = sandbox(world_file())

    async def create(gateway):
        chat = await gateway.create_channel(title="Stash archive", about="Where every set lands")
        await gateway.add_channel_writer(chat.ref, phone=NEWCOMER)
        await gateway.add_channel_writer(chat.ref, phone=NEWCOMER)  # a second time changes nothing
        return chat

    chat = sandbox_run(world, READER, create)

    assert (chat.title, chat.type, chat.can_post) == ("Stash archive", "channel", True)
    assert world.membership(chat.id, READER) == "admin" and world.membership(chat.id, NEWCOMER) == "admin"
    seen = {info.id: info for info in sandbox_run(world, NEWCOMER, lambda gateway: gateway.list_chats())}
    assert seen[chat.id].can_post, "the writer may post in it"
    sent = sandbox_run(
        world, NEWCOMER, lambda gateway: gateway.send_message(seen[chat.id].ref, random_id=7, text="first set")
    )
    assert sent.id == 1


def test_adding_a_writer_is_refused_in_the_operators_words(sandbox, sandbox_run):
    world = sandbox(world_file())
    chat = sandbox_run(world, READER, lambda gateway: gateway.create_channel(title="Stash archive"))

    with pytest.raises(TargetForbidden, match="privacy settings"):
        sandbox_run(world, READER, lambda gateway: gateway.add_channel_writer(chat.ref, phone=SHY))
    with pytest.raises(NotFound, match="No Telegram account has this phone number"):
        sandbox_run(world, READER, lambda gateway: gateway.add_channel_writer(chat.ref, phone="+15559999999"))
    with pytest.raises(TargetForbidden, match="Only an admin"):
        sandbox_run(world, READER, lambda gateway: gateway.add_channel_writer(ref(READER, PUBLIC), phone=NEWCOMER))
    assert world.membership(chat.id, SHY) is None

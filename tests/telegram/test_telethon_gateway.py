"""TelethonGateway at the Telethon boundary, for what the sandbox server cannot express: a stand-in
client records what the adapter sends and answers with crafted Telethon `types` objects (or real
Telethon errors), including answers Telegram gives and the sandbox does not.
"""

import asyncio
import inspect
import json
from datetime import UTC, datetime, timedelta

import pytest
from telethon import TelegramClient, errors, functions, types, utils
from telethon.sessions import StringSession
from telethon.tl import custom

from telegram.errors import (
    AuthRequired,
    TransientError,
)
from telegram.records import (
    PREMIUM_UPLOAD_MAX_BYTES,
    AccountInfo,
    ChatInfo,
    ChatRef,
    DocumentInfo,
    SentMessage,
    TopicInfo,
)
from telegram.telethon.gateway import TelethonGateway

PHONE = "+15550000001"
DATE = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
CHANNEL = ChatRef(id=1001, access_hash=555, type="channel")
GROUP = ChatRef(id=77, type="group")


class StandInClient:
    """Stands in for TelegramClient: records raw requests and high-level calls, answers as told.

    `answers[RequestType]` and `results[method]` hold, in order, a TLObject to return, an exception to
    raise, or a function of the request (or call arguments) that returns the answer.
    """

    def __init__(self):
        self.answers: dict[type, list] = {}
        self.results: dict[str, object] = {}
        self.requests: list = []
        self.calls: list[tuple[str, tuple, dict]] = []
        self.dialogs: list = []
        self.connected = False

    def factory(self, session, api_id, api_hash, **options):
        self.session, self.api_id, self.api_hash, self.options = session, api_id, api_hash, options
        return self

    def answer(self, request_type: type, *answers) -> None:
        self.answers.setdefault(request_type, []).extend(answers)

    async def __call__(self, request):
        bytes(request)  # it would serialize on the wire: every required field is set with the right type
        self.requests.append(request)
        return _resolve(self.answers[type(request)].pop(0), request)

    def requests_of(self, request_type: type) -> list:
        return [request for request in self.requests if isinstance(request, request_type)]

    def calls_of(self, name: str) -> list[tuple[tuple, dict]]:
        return [(args, kwargs) for called, args, kwargs in self.calls if called == name]

    def _record(self, name, args, kwargs) -> None:
        # Called as the real TelegramClient method could be: same parameter names and kinds.
        inspect.signature(getattr(TelegramClient, name)).bind(self, *args, **kwargs)
        self.calls.append((name, args, kwargs))

    async def _high_level(self, name, *args, **kwargs):
        self._record(name, args, kwargs)
        return _resolve(self.results[name], *args, **kwargs)

    @property
    def _sender(self):
        """The gateway sends messages straight to the network sender: that is this stand-in too."""
        return self

    def send(self, request):
        return self(request.query if isinstance(request, functions.InvokeWithoutUpdatesRequest) else request)

    async def connect(self):
        self.calls.append(("connect", (), {}))
        if isinstance(self.results.get("connect"), BaseException):
            raise self.results["connect"]
        self.connected = True

    async def disconnect(self):
        self.calls.append(("disconnect", (), {}))
        self.connected = False

    async def iter_dialogs(self, **kwargs):
        self._record("iter_dialogs", (), kwargs)
        for dialog in self.dialogs:
            yield dialog


def _resolve(answer, *args, **kwargs):
    if isinstance(answer, BaseException):
        raise answer
    if callable(answer):
        return answer(*args, **kwargs)
    return answer


def run(client: StandInClient, use, *, session: str = ""):
    """Open a gateway on the stand-in and run `use(gateway)` inside one asyncio.run, like a task."""

    async def scenario():
        async with TelethonGateway(PHONE, session, "12345", "hash", client_factory=client.factory) as gateway:
            return await use(gateway)

    return asyncio.run(scenario())


def user(premium=False) -> types.User:
    return types.User(
        id=4242, is_self=True, first_name="Reader", last_name="A", username="reader_a", phone="15550000001",
        premium=premium,
    )  # fmt: skip


def channel(id=1001, **flags) -> types.Channel:
    return types.Channel(
        id=id, title=f"Chat {id}", photo=types.ChatPhotoEmpty(), date=DATE, access_hash=id * 5, **flags
    )


def basic_group(id=77, **flags) -> types.Chat:
    return types.Chat(
        id=id, title=f"Group {id}", photo=types.ChatPhotoEmpty(), participants_count=3, date=DATE, version=1, **flags
    )


def raw_dialog(peer, top_message=1) -> types.Dialog:
    return types.Dialog(
        peer=peer, top_message=top_message, read_inbox_max_id=0, read_outbox_max_id=0, unread_count=0,
        unread_mentions_count=0, unread_reactions_count=0, unread_poll_votes_count=0,
        notify_settings=types.PeerNotifySettings(),
    )  # fmt: skip


def dialog(entity) -> custom.Dialog:
    """What Telethon's iter_dialogs yields."""
    peer = utils.get_peer(entity)
    return custom.Dialog(None, raw_dialog(peer), {utils.get_peer_id(peer): entity}, None)


def document(id=900, name="dragon.zip", size=3000, file_reference=b"\x0a\x0b", dc_id=4) -> types.Document:
    return types.Document(
        id=id, access_hash=id * 7, file_reference=file_reference, date=DATE, mime_type="application/zip", size=size,
        dc_id=dc_id, attributes=[types.DocumentAttributeFilename(name)],
    )  # fmt: skip


def message(id, *, peer=None, media=None, reply_to=None, text="", **fields) -> types.Message:
    return types.Message(
        id=id, peer_id=peer or types.PeerChannel(CHANNEL.id), date=DATE, message=text, media=media, reply_to=reply_to,
        **fields,
    )  # fmt: skip


def doc_message(id, **kwargs) -> types.Message:
    return message(id, media=types.MessageMediaDocument(document=document(id=id * 10)), **kwargs)


def channel_messages(messages, chats) -> types.messages.ChannelMessages:
    return types.messages.ChannelMessages(
        pts=1, count=len(messages), messages=messages, topics=[], chats=chats, users=[]
    )


def forum_topic(id, top_message, date=DATE) -> types.ForumTopic:
    return types.ForumTopic(
        id=id, date=date, peer=types.PeerChannel(CHANNEL.id), title=f"Topic {id}", icon_color=0,
        top_message=top_message, read_inbox_max_id=0, read_outbox_max_id=0, unread_count=0,
        unread_mentions_count=0, unread_reactions_count=0, unread_poll_votes_count=0,
        from_id=types.PeerUser(1), notify_settings=types.PeerNotifySettings(),
    )  # fmt: skip


# What the sandbox server does not answer: the client's options, and odd answers Telegram can give.
# Everything else the gateway does is tested against the sandbox server (test_sandbox_*.py).


def test_client_is_made_with_the_gateways_options_and_lives_inside_the_block():
    client = StandInClient()

    async def nothing(gateway):
        return None

    run(client, nothing)

    assert isinstance(client.session, StringSession)
    assert (client.api_id, client.api_hash) == (12345, "hash")
    assert client.options == {
        "flood_sleep_threshold": 0,
        "request_retries": 2,
        "raise_last_call_error": True,
        "receive_updates": False,
    }
    assert [name for name, _, _ in client.calls] == ["connect", "disconnect"]
    assert not client.connected


def test_get_me_answered_with_an_empty_user_asks_for_a_login():
    client = StandInClient()
    client.answer(functions.users.GetUsersRequest, [types.UserEmpty(id=0)])

    with pytest.raises(AuthRequired):
        run(client, lambda gateway: gateway.get_me())


def test_upload_limits_fall_back_to_telegrams_when_the_app_config_has_none():
    client = StandInClient()
    client.answer(functions.users.GetUsersRequest, [user(premium=True)])
    client.answer(functions.help.GetAppConfigRequest, types.help.AppConfigNotModified())

    me = run(client, lambda gateway: gateway.get_me())

    assert (me.premium, me.upload_max_bytes) == (True, PREMIUM_UPLOAD_MAX_BYTES)
    assert me == AccountInfo(
        user_id=4242, phone=PHONE, first_name="Reader", last_name="A", username="reader_a", premium=True,
        upload_max_bytes=PREMIUM_UPLOAD_MAX_BYTES,
    )  # fmt: skip


# Chats


def test_list_chats_keeps_channels_supergroups_groups_and_people():
    client = StandInClient()
    client.dialogs = [
        dialog(channel(1, broadcast=True, creator=True)),
        dialog(channel(2, broadcast=True)),
        dialog(channel(3, broadcast=True, admin_rights=types.ChatAdminRights(post_messages=True))),
        dialog(channel(4, broadcast=True, admin_rights=types.ChatAdminRights(edit_messages=True))),
        dialog(channel(5, megagroup=True, forum=True)),
        dialog(channel(6, megagroup=True, default_banned_rights=types.ChatBannedRights(None, send_messages=True))),
        dialog(channel(7, megagroup=True, slowmode_enabled=True)),
        dialog(basic_group(8)),
        dialog(basic_group(9, default_banned_rights=types.ChatBannedRights(None, send_messages=True))),
        dialog(basic_group(10, deactivated=True)),
        dialog(types.User(id=11, first_name="Someone", access_hash=1)),
        dialog(types.User(id=12, first_name="Dana", last_name="Prints", username="dana_prints", access_hash=2)),
        dialog(types.User(id=13, first_name="Helper", bot=True, access_hash=3)),
        dialog(types.User(id=14, deleted=True, access_hash=4)),
        dialog(types.User(id=4242, is_self=True, first_name="Reader", access_hash=5)),  # Saved Messages
        dialog(types.User(id=777000, first_name="Telegram", access_hash=6)),  # login codes
        dialog(types.User(id=15, first_name="Support", support=True, access_hash=7)),
    ]
    full_channel = types.ChannelFull(
        id=7, about="", read_inbox_max_id=0, read_outbox_max_id=0, unread_count=0, chat_photo=types.PhotoEmpty(0),
        notify_settings=types.PeerNotifySettings(), bot_info=[], pts=1, slowmode_seconds=30,
    )  # fmt: skip
    client.answer(
        functions.channels.GetFullChannelRequest, types.messages.ChatFull(full_chat=full_channel, chats=[], users=[])
    )

    chats = run(client, lambda gateway: gateway.list_chats())

    assert client.calls_of("iter_dialogs") == [((), {"ignore_migrated": True})]
    assert client.requests == [functions.channels.GetFullChannelRequest(types.InputChannel(7, 35))]
    assert chats == [
        ChatInfo(id=1, access_hash=5, title="Chat 1", type="channel", can_post=True),
        ChatInfo(id=2, access_hash=10, title="Chat 2", type="channel", can_post=False),
        ChatInfo(id=3, access_hash=15, title="Chat 3", type="channel", can_post=True),
        ChatInfo(id=4, access_hash=20, title="Chat 4", type="channel", can_post=False),
        ChatInfo(id=5, access_hash=25, title="Chat 5", type="supergroup", forum=True, can_post=True),
        ChatInfo(id=6, access_hash=30, title="Chat 6", type="supergroup", can_post=False),
        ChatInfo(id=7, access_hash=35, title="Chat 7", type="supergroup", slow_mode_seconds=30, can_post=True),
        ChatInfo(id=8, access_hash=0, title="Group 8", type="group", can_post=True, members_count=3),
        ChatInfo(id=9, access_hash=0, title="Group 9", type="group", can_post=False, members_count=3),
        ChatInfo(id=11, access_hash=1, title="Someone", type="user", can_post=True),
        ChatInfo(id=12, access_hash=2, title="Dana Prints", type="user", can_post=True, username="dana_prints"),
    ]


def test_a_person_is_addressed_by_their_user_id_and_access_hash():
    client = StandInClient()
    sent = types.UpdateShortSentMessage(id=5, pts=1, pts_count=1, date=DATE)
    client.answer(functions.messages.ForwardMessagesRequest, sent)
    client.answer(
        functions.messages.GetMessagesRequest, types.messages.Messages(messages=[], topics=[], chats=[], users=[])
    )
    person = ChatRef(id=12, access_hash=2, type="user")

    async def use(gateway):
        copied = await gateway.copy_message(CHANNEL, 30, person, random_id=9)
        return copied, await gateway.get_messages(person, [5])

    copied, found = run(client, use)

    [forward] = client.requests_of(functions.messages.ForwardMessagesRequest)
    assert forward.to_peer == types.InputPeerUser(user_id=12, access_hash=2)
    assert copied == SentMessage(chat_id=12, id=5, random_id=9, date=DATE)
    # a private chat lives in the account's message box, as basic groups do: no channels.getMessages
    assert client.requests_of(functions.messages.GetMessagesRequest) and found == {5: None}


def test_last_message_ids_of_250_chats_take_3_requests():
    chats = [ChatRef(id=id, access_hash=id * 3, type="channel") for id in range(1, 249)] + [
        ChatRef(id=5001, type="group"),
        ChatRef(id=5002, type="group"),
    ]

    def peer_dialogs(request):
        peers = [utils.get_peer(dialog_peer.peer) for dialog_peer in request.peers]
        return types.messages.PeerDialogs(
            # Telegram leaves out a chat the account is no longer in: here the last of each batch.
            dialogs=[raw_dialog(peer, top_message=utils.get_peer_id(peer, add_mark=False) * 10) for peer in peers[:-1]],
            messages=[],
            chats=[],
            users=[],
            state=types.updates.State(pts=1, qts=0, date=DATE, seq=0, unread_count=0),
        )

    client = StandInClient()
    client.answer(functions.messages.GetPeerDialogsRequest, peer_dialogs, peer_dialogs, peer_dialogs)

    last_ids = run(client, lambda gateway: gateway.get_last_message_ids(chats))

    requests = client.requests_of(functions.messages.GetPeerDialogsRequest)
    assert [len(request.peers) for request in requests] == [100, 100, 50]
    assert requests[0].peers[0] == types.InputDialogPeer(types.InputPeerChannel(channel_id=1, access_hash=3))
    assert requests[2].peers[-1] == types.InputDialogPeer(types.InputPeerChat(chat_id=5002))
    assert len(last_ids) == 247 and {100, 200, 5002}.isdisjoint(last_ids)
    assert (last_ids[1], last_ids[248], last_ids[5001]) == (10, 2480, 50010)


# Topics


def test_list_topics_pages_telegrams_order_and_serves_pages_by_id():
    # Telegram answers by last activity: ids 150..51 first, then 50..1 (and a deleted topic).
    first = [forum_topic(id, top_message=1000 + id) for id in range(150, 50, -1)]
    second = [forum_topic(id, top_message=1000 + id) for id in range(50, 0, -1)] + [types.ForumTopicDeleted(id=999)]
    client = StandInClient()
    client.answer(
        functions.messages.GetForumTopicsRequest,
        types.messages.ForumTopics(
            count=151, topics=first, messages=[message(1051, text="last of page one")], chats=[], users=[], pts=1
        ),
        types.messages.ForumTopics(count=151, topics=second, messages=[], chats=[], users=[], pts=1),
    )

    async def two_pages(gateway):
        page = await gateway.list_topics(CHANNEL)
        return page, await gateway.list_topics(CHANNEL, offset_topic_id=page[-1].id)

    first_page, second_page = run(client, two_pages)

    requests = client.requests_of(functions.messages.GetForumTopicsRequest)
    assert len(requests) == 2  # the second page comes from memory
    assert requests[0] == functions.messages.GetForumTopicsRequest(
        peer=types.InputPeerChannel(1001, 555), offset_date=None, offset_id=0, offset_topic=0, limit=100
    )
    assert (requests[1].offset_date, requests[1].offset_id, requests[1].offset_topic) == (DATE, 1051, 51)
    assert [topic.id for topic in first_page] == list(range(1, 101))
    assert [topic.id for topic in second_page] == list(range(101, 151))
    assert first_page[41] == TopicInfo(id=42, title="Topic 42", top_message_id=1042)


def test_list_topics_pages_by_creation_date_when_the_forum_orders_so():
    created = datetime(2024, 5, 6, tzinfo=UTC)
    client = StandInClient()
    client.answer(
        functions.messages.GetForumTopicsRequest,
        types.messages.ForumTopics(
            count=101,
            topics=[forum_topic(id, 2000 + id, created) for id in range(1, 101)],
            messages=[],
            chats=[],
            users=[],
            pts=1,
            order_by_create_date=True,
        ),
        types.messages.ForumTopics(count=101, topics=[forum_topic(101, 2101)], messages=[], chats=[], users=[], pts=1),
    )

    topics = run(client, lambda gateway: gateway.list_topics(CHANNEL))

    second = client.requests_of(functions.messages.GetForumTopicsRequest)[1]
    assert (second.offset_date, second.offset_id, second.offset_topic) == (created, 2100, 100)
    assert len(topics) == 100


# Documents


def test_search_documents_sends_one_search_checks_ids_itself_and_assigns_forum_topics():
    client = StandInClient()
    client.answer(
        functions.messages.SearchRequest,
        channel_messages(
            [
                doc_message(30, reply_to=types.MessageReplyHeader(forum_topic=True, reply_to_msg_id=42)),
                doc_message(
                    29, reply_to=types.MessageReplyHeader(forum_topic=True, reply_to_msg_id=28, reply_to_top_id=42)
                ),
                doc_message(27, reply_to=types.MessageReplyHeader(reply_to_msg_id=26)),  # a reply inside General
                doc_message(25),
                doc_message(20),  # the bounds are exclusive, whatever Telegram answers
                doc_message(19),
            ],
            chats=[channel(CHANNEL.id, megagroup=True, forum=True)],
        ),
    )

    page = run(client, lambda gateway: gateway.search_documents(CHANNEL, min_id=20, offset_id=31, topic_id=None))
    found = page.messages

    assert client.requests == [
        functions.messages.SearchRequest(
            peer=types.InputPeerChannel(1001, 555),
            q="",
            filter=types.InputMessagesFilterDocument(),
            min_date=None,
            max_date=None,
            offset_id=31,
            add_offset=0,
            limit=100,
            max_id=0,  # Telegram does not honour min_id/max_id near the top of history
            min_id=0,
            hash=0,
            top_msg_id=None,
        )
    ]
    assert [(m.id, m.topic_id) for m in found] == [(30, 42), (29, 42), (27, 1), (25, 1)]
    assert found[0].chat_id == 1001 and found[0].date == DATE
    assert found[0].document == DocumentInfo(id=300, name="dragon.zip", size=3000, mime_type="application/zip")
    assert found[0].document.location == {"id": 300, "access_hash": 2100, "file_reference": "0a0b", "dc_id": 4}
    json.dumps(found[0].document.location)  # storable as is
    assert page.next_offset_id is None  # the page went below min_id: nothing older is wanted


def test_search_documents_since_a_date_asks_for_it_and_stops_at_it():
    def dated(id, seconds):
        media = types.MessageMediaDocument(document=document(id=id * 10))
        peer = types.PeerChannel(CHANNEL.id)
        return types.Message(id=id, peer_id=peer, date=DATE + timedelta(seconds=seconds), message="", media=media)

    client = StandInClient()
    answer = channel_messages([dated(12, 10), dated(11, 0), dated(10, -1)], chats=[channel(CHANNEL.id)])
    client.answer(functions.messages.SearchRequest, answer)
    since = DATE + timedelta(microseconds=400_000)  # Telegram's dates are whole seconds: 11 is in

    page = run(client, lambda gateway: gateway.search_documents(CHANNEL, min_id=0, min_date=since))

    assert client.requests[0].min_date == DATE
    assert [message.id for message in page.messages] == [12, 11]
    assert page.next_offset_id is None  # the page reached the date: nothing older is wanted


def test_search_documents_narrows_to_a_topic_and_ignores_topics_outside_forums():
    client = StandInClient()
    client.answer(
        functions.messages.SearchRequest,
        channel_messages(
            [doc_message(12, reply_to=types.MessageReplyHeader(reply_to_msg_id=5)), doc_message(11)],
            chats=[channel(CHANNEL.id, broadcast=True)],
        ),
    )

    page = run(client, lambda gateway: gateway.search_documents(CHANNEL, min_id=10, topic_id=42))

    request = client.requests[0]
    assert (request.top_msg_id, request.min_id, request.max_id) == (42, 0, 0)
    assert [(m.id, m.topic_id) for m in page.messages] == [(12, None), (11, None)]


def test_search_documents_in_a_basic_group_answered_whole():
    # messages.Messages (no count, no slice): Telegram's answer when every match fits in one page.
    client = StandInClient()
    client.answer(
        functions.messages.SearchRequest,
        types.messages.Messages(messages=[doc_message(5, peer=types.PeerChat(77))], topics=[], chats=[], users=[]),
    )

    page = run(client, lambda gateway: gateway.search_documents(GROUP, min_id=0))

    assert client.requests[0].peer == types.InputPeerChat(77)
    assert [(m.chat_id, m.id, m.topic_id) for m in page.messages] == [(77, 5, None)]
    assert page.next_offset_id is None


def test_a_slice_that_is_not_the_whole_answer_goes_on_from_its_lowest_id():
    client = StandInClient()
    slice_ = types.messages.ChannelMessages(
        pts=1, count=500, messages=[doc_message(90), message(88)], topics=[], chats=[], users=[], inexact=True
    )
    client.answer(functions.messages.SearchRequest, slice_)

    page = run(client, lambda gateway: gateway.search_documents(CHANNEL, min_id=10))

    assert [m.id for m in page.messages] == [90, 88]
    assert page.next_offset_id == 88


# Uploads and sends


def test_a_send_answered_with_a_short_sent_message_gives_its_id_and_date():
    client = StandInClient()
    client.answer(
        functions.messages.SendMessageRequest, types.UpdateShortSentMessage(id=9, pts=1, pts_count=1, date=DATE)
    )

    sent = run(client, lambda gw: gw.send_message(GROUP, random_id=3, text="hi"))

    assert sent == SentMessage(chat_id=77, id=9, random_id=3, date=DATE)


def test_a_send_is_tried_once_even_on_a_server_error():
    # Callers own retries (the random_id makes a retry safe); Telethon would retry RPC_CALL_FAIL by itself.
    rpc_call_fail = errors.RpcCallFailError(request=None)
    client = StandInClient()
    client.answer(functions.messages.SendMessageRequest, rpc_call_fail)

    with pytest.raises(TransientError) as raised:
        run(client, lambda gw: gw.send_message(GROUP, random_id=1, text="hi"))

    assert raised.value.rpc == "RPC_CALL_FAIL" and raised.value.__cause__ is rpc_call_fail
    assert len(client.requests_of(functions.messages.SendMessageRequest)) == 1


def test_search_photos_asks_one_channel_wide_dated_search_and_reads_the_largest_size_of_any_kind():
    photo = types.Photo(
        id=9,
        access_hash=99,
        file_reference=b"\x01",
        date=DATE,
        dc_id=4,
        sizes=[
            types.PhotoStrippedSize(type="i", bytes=b"\x01\x02"),  # an inline blur: no size to download
            types.PhotoSize(type="m", w=320, h=240, size=9000),
            types.PhotoSizeProgressive(type="y", w=1280, h=960, sizes=[4000, 20000, 61000]),
        ],
    )
    client = StandInClient()
    client.answer(
        functions.messages.SearchRequest,
        channel_messages(
            [
                message(8, media=types.MessageMediaPhoto(photo=photo), grouped_id=77),
                message(7, media=types.MessageMediaPhoto(photo=None)),  # a photo that expired: nothing to read
            ],
            chats=[channel(CHANNEL.id)],
        ),
    )
    since = DATE - timedelta(seconds=60)
    page = run(client, lambda gateway: gateway.search_photos(CHANNEL, min_date=since))
    found = page.messages

    [request] = client.requests
    assert isinstance(request.filter, types.InputMessagesFilterPhotos) and request.top_msg_id is None
    assert (request.min_date, request.max_date, request.offset_id) == (since, None, 0)
    assert [(m.id, m.grouped_id, m.photo is not None) for m in found] == [(8, 77, True), (7, None, False)]
    assert page.next_offset_id is None  # the first page held every match
    assert (found[0].photo.size, found[0].photo.mime_type) == (61000, "image/jpeg")
    assert found[0].photo.location == {
        "photo": True, "id": 9, "access_hash": 99, "file_reference": "01", "dc_id": 4, "thumb_size": "y",
    }  # fmt: skip


def test_a_copy_with_a_caption_sends_the_same_document_under_it_and_an_empty_caption_drops_the_old_one():
    client = StandInClient()
    client.answer(
        functions.channels.GetMessagesRequest, channel_messages([doc_message(30)], chats=[channel(CHANNEL.id)])
    )
    client.answer(
        functions.messages.SendMediaRequest, types.UpdateShortSentMessage(id=9, pts=1, pts_count=1, date=DATE)
    )
    client.answer(
        functions.messages.ForwardMessagesRequest, types.UpdateShortSentMessage(id=10, pts=2, pts_count=1, date=DATE)
    )

    async def use(gateway):
        written = await gateway.copy_message(CHANNEL, 30, GROUP, random_id=3, caption="For you 🐉")
        bare = await gateway.copy_message(CHANNEL, 30, GROUP, random_id=4, caption="")
        return written, bare

    written, bare = run(client, use)

    [send] = client.requests_of(functions.messages.SendMediaRequest)
    assert send.media == types.InputMediaDocument(
        id=types.InputDocument(id=300, access_hash=2100, file_reference=b"\x0a\x0b")
    ), "the message's own document, with the reference just read"
    assert (send.message, send.random_id, send.peer) == ("For you 🐉", 3, types.InputPeerChat(77))
    [forward] = client.requests_of(functions.messages.ForwardMessagesRequest)
    assert forward.drop_author and forward.drop_media_captions and forward.random_id == [4]
    assert (written.id, bare.id) == (9, 10)

"""TelethonGateway at the Telethon boundary: a stand-in client records what the adapter sends.

No network: every answer is a crafted Telethon `types` object (or a real Telethon error).
"""

import asyncio
import inspect
import json
from datetime import UTC, datetime

import pytest
from telethon import TelegramClient, errors, functions, types, utils
from telethon.crypto import AuthKey
from telethon.sessions import StringSession
from telethon.tl import custom

from telegram.errors import (
    AuthRequired,
    CodeExpired,
    CodeInvalid,
    FileReferenceExpired,
    FileTooLarge,
    FloodWait,
    PasswordInvalid,
    PasswordRequired,
    PhoneInvalid,
    TargetForbidden,
    TransientError,
)
from telegram.gateway import PART_SIZE
from telegram.records import (
    PREMIUM_UPLOAD_MAX_BYTES,
    UPLOAD_MAX_BYTES,
    AccountInfo,
    ChatInfo,
    ChatRef,
    DocumentInfo,
    MediaHandle,
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
        self.file_bytes = b""
        self.download_error_after: tuple[int, Exception] | None = None
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

    async def connect(self):
        self.calls.append(("connect", (), {}))
        if isinstance(self.results.get("connect"), BaseException):
            raise self.results["connect"]
        self.connected = True

    async def disconnect(self):
        self.calls.append(("disconnect", (), {}))
        self.connected = False

    async def send_code_request(self, *args, **kwargs):
        return await self._high_level("send_code_request", *args, **kwargs)

    async def sign_in(self, *args, **kwargs):
        return await self._high_level("sign_in", *args, **kwargs)

    async def get_me(self, *args, **kwargs):
        return await self._high_level("get_me", *args, **kwargs)

    async def upload_file(self, *args, **kwargs):
        return await self._high_level("upload_file", *args, **kwargs)

    async def iter_dialogs(self, **kwargs):
        self._record("iter_dialogs", (), kwargs)
        for dialog in self.dialogs:
            yield dialog

    async def iter_download(self, file, **kwargs):
        """Like Telethon: request_size parts of `file_bytes` from `offset`, at most `limit` of them."""
        self._record("iter_download", (file,), kwargs)
        offset, size, limit = kwargs["offset"], kwargs["request_size"], kwargs["limit"]
        for index in range(limit):
            if self.download_error_after and index == self.download_error_after[0]:
                raise self.download_error_after[1]
            chunk = self.file_bytes[offset + index * size : offset + (index + 1) * size]
            yield memoryview(chunk)
            if len(chunk) < size:
                return


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


async def collect(stream) -> list[bytes]:
    return [chunk async for chunk in stream]


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


def message(id, *, peer=None, media=None, reply_to=None, text="") -> types.Message:
    return types.Message(
        id=id, peer_id=peer or types.PeerChannel(CHANNEL.id), date=DATE, message=text, media=media, reply_to=reply_to
    )


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


def sent_updates(message_id, random_id) -> types.Updates:
    return types.Updates(
        updates=[
            types.UpdateMessageID(id=message_id, random_id=random_id),
            types.UpdateNewChannelMessage(message=message(message_id), pts=2, pts_count=1),
        ],
        users=[], chats=[], date=DATE, seq=0,
    )  # fmt: skip


# Lifecycle


def test_client_lives_inside_the_block_built_from_the_string_session():
    client = StandInClient()
    client.results["get_me"] = user()

    run(client, lambda gateway: gateway.get_me())

    assert isinstance(client.session, StringSession)
    assert (client.api_id, client.api_hash) == (12345, "hash")
    assert client.options == {
        "flood_sleep_threshold": 0,
        "request_retries": 2,
        "raise_last_call_error": True,
        "receive_updates": False,
    }
    assert [name for name, _, _ in client.calls] == ["connect", "get_me", "disconnect"]
    assert not client.connected


def test_export_session_returns_the_clients_session_string():
    stored = StringSession()
    stored.set_dc(2, "149.154.167.51", 443)
    stored.auth_key = AuthKey(bytes(range(256)))
    session = stored.save()
    client = StandInClient()
    gateway = TelethonGateway(PHONE, "", 1, "hash", client_factory=client.factory)

    async def export(gateway):
        return gateway.export_session()

    assert gateway.export_session() == ""
    assert run(client, export, session=session) == session


def test_an_unreadable_session_asks_for_a_new_login():
    with pytest.raises(AuthRequired, match="cannot be read"):
        run(StandInClient(), lambda gateway: gateway.get_me(), session="not a session")


def test_a_connection_failure_is_transient():
    client = StandInClient()
    client.results["connect"] = ConnectionError("Connection to Telegram failed 5 time(s)")

    with pytest.raises(TransientError):
        run(client, lambda gateway: gateway.get_me())


# Login


def test_send_code_returns_the_phone_code_hash():
    client = StandInClient()
    client.results["send_code_request"] = types.auth.SentCode(
        type=types.auth.SentCodeTypeApp(length=5), phone_code_hash="abc123"
    )

    assert run(client, lambda gateway: gateway.send_code()) == "abc123"
    assert client.calls_of("send_code_request") == [((PHONE,), {})]


def test_send_code_to_an_invalid_phone():
    client = StandInClient()
    client.results["send_code_request"] = errors.PhoneNumberInvalidError(request=None)

    with pytest.raises(PhoneInvalid):
        run(client, lambda gateway: gateway.send_code())


def test_sign_in_with_code_returns_the_account():
    client = StandInClient()
    client.results["sign_in"] = user()

    account = run(client, lambda gateway: gateway.sign_in_code(code="12345", phone_code_hash="abc123"))

    assert client.calls_of("sign_in") == [((), {"phone": PHONE, "code": "12345", "phone_code_hash": "abc123"})]
    assert account == AccountInfo(
        user_id=4242,
        phone=PHONE,
        first_name="Reader",
        last_name="A",
        username="reader_a",
        premium=False,
        upload_max_bytes=UPLOAD_MAX_BYTES,
    )


@pytest.mark.parametrize(
    ("telethon_error", "expected"),
    [
        (errors.PhoneCodeInvalidError, CodeInvalid),
        (errors.PhoneCodeExpiredError, CodeExpired),
        (errors.SessionPasswordNeededError, PasswordRequired),
    ],
)
def test_sign_in_with_code_failures(telethon_error, expected):
    client = StandInClient()
    client.results["sign_in"] = telethon_error(request=None)

    with pytest.raises(expected):
        run(client, lambda gateway: gateway.sign_in_code(code="1", phone_code_hash="abc123"))


def test_sign_in_with_password_returns_a_premium_account():
    client = StandInClient()
    client.results["sign_in"] = user(premium=True)

    account = run(client, lambda gateway: gateway.sign_in_password(password="secret"))

    assert client.calls_of("sign_in") == [((), {"password": "secret"})]
    assert (account.premium, account.upload_max_bytes) == (True, PREMIUM_UPLOAD_MAX_BYTES)


def test_sign_in_with_a_wrong_password():
    client = StandInClient()
    client.results["sign_in"] = errors.PasswordHashInvalidError(request=None)

    with pytest.raises(PasswordInvalid):
        run(client, lambda gateway: gateway.sign_in_password(password="wrong"))


def test_get_me_without_a_login_asks_for_one():
    client = StandInClient()
    client.results["get_me"] = None  # what Telethon answers for a session that is not logged in

    with pytest.raises(AuthRequired):
        run(client, lambda gateway: gateway.get_me())


# Chats


def test_list_chats_keeps_channels_supergroups_and_groups():
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
        ChatInfo(id=8, access_hash=0, title="Group 8", type="group", can_post=True),
        ChatInfo(id=9, access_hash=0, title="Group 9", type="group", can_post=False),
    ]


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


def test_search_documents_sends_one_search_and_assigns_forum_topics():
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
            ],
            chats=[channel(CHANNEL.id, megagroup=True, forum=True)],
        ),
    )

    found = run(client, lambda gateway: gateway.search_documents(CHANNEL, min_id=20, max_id=31, topic_id=None))

    assert client.requests == [
        functions.messages.SearchRequest(
            peer=types.InputPeerChannel(1001, 555),
            q="",
            filter=types.InputMessagesFilterDocument(),
            min_date=None,
            max_date=None,
            offset_id=0,
            add_offset=0,
            limit=100,
            max_id=31,
            min_id=20,
            hash=0,
            top_msg_id=None,
        )
    ]
    assert [(m.id, m.topic_id) for m in found] == [(30, 42), (29, 42), (27, 1), (25, 1)]
    assert found[0].chat_id == 1001 and found[0].date == DATE
    assert found[0].document == DocumentInfo(id=300, name="dragon.zip", size=3000, mime_type="application/zip")
    assert found[0].document.location == {"id": 300, "access_hash": 2100, "file_reference": "0a0b", "dc_id": 4}
    json.dumps(found[0].document.location)  # storable as is


def test_search_documents_narrows_to_a_topic_and_ignores_topics_outside_forums():
    client = StandInClient()
    client.answer(
        functions.messages.SearchRequest,
        channel_messages(
            [doc_message(12, reply_to=types.MessageReplyHeader(reply_to_msg_id=5)), doc_message(11)],
            chats=[channel(CHANNEL.id, broadcast=True)],
        ),
    )

    found = run(client, lambda gateway: gateway.search_documents(CHANNEL, min_id=10, topic_id=42))

    request = client.requests[0]
    assert (request.top_msg_id, request.min_id, request.max_id) == (42, 10, 0)
    assert [(m.id, m.topic_id) for m in found] == [(12, None), (11, None)]


def test_search_documents_in_a_basic_group():
    client = StandInClient()
    client.answer(
        functions.messages.SearchRequest,
        types.messages.Messages(messages=[doc_message(5, peer=types.PeerChat(77))], topics=[], chats=[], users=[]),
    )

    found = run(client, lambda gateway: gateway.search_documents(GROUP, min_id=0))

    assert client.requests[0].peer == types.InputPeerChat(77)
    assert [(m.chat_id, m.id, m.topic_id) for m in found] == [(77, 5, None)]


def test_get_messages_fetches_fresh_copies_in_batches_of_100():
    ids = list(range(1, 151))
    fresh = document(id=10, file_reference=b"\xff\xee")

    def channel_get_messages(request):
        present = [
            message(m.id, media=types.MessageMediaDocument(document=fresh)) if m.id == 1 else message(m.id)
            for m in request.id
            if m.id not in (2, 149)
        ]
        gone = [types.MessageEmpty(id=2, peer_id=None)] if request.id[0].id == 1 else []
        return channel_messages(present + gone, chats=[channel(CHANNEL.id, broadcast=True)])

    client = StandInClient()
    client.answer(functions.channels.GetMessagesRequest, channel_get_messages, channel_get_messages)

    found = run(client, lambda gateway: gateway.get_messages(CHANNEL, ids))

    requests = client.requests_of(functions.channels.GetMessagesRequest)
    assert [len(request.id) for request in requests] == [100, 50]
    assert requests[0].channel == types.InputChannel(1001, 555)
    assert requests[0].id[:2] == [types.InputMessageID(1), types.InputMessageID(2)]
    assert set(found) == set(ids)
    assert found[2] is None and found[149] is None
    assert found[1].document.location["file_reference"] == "ffee"
    assert found[3].document is None and found[3].text == ""


def test_get_messages_of_a_basic_group_ignores_other_chats_messages():
    client = StandInClient()
    client.answer(
        functions.messages.GetMessagesRequest,
        types.messages.Messages(
            messages=[doc_message(5, peer=types.PeerChat(77)), message(6, peer=types.PeerChat(78))],
            topics=[],
            chats=[],
            users=[],
        ),
    )

    found = run(client, lambda gateway: gateway.get_messages(GROUP, [5, 6]))

    assert client.requests == [
        functions.messages.GetMessagesRequest(id=[types.InputMessageID(5), types.InputMessageID(6)])
    ]
    assert found[5].document.id == 50 and found[6] is None


# Downloads

FILE = bytes(range(256)) * 5000  # 1,280,000 bytes: two full parts and a short one
LOCATION = {"id": 300, "access_hash": 2100, "file_reference": "0a0b", "dc_id": 4}
DOWNLOADED = DocumentInfo(id=300, name="dragon.zip", size=len(FILE), location=LOCATION)


def test_iter_download_streams_parts_from_the_stored_location():
    client = StandInClient()
    client.file_bytes = FILE

    chunks = run(client, lambda gateway: collect(gateway.iter_download(CHANNEL, DOWNLOADED)))

    [(args, kwargs)] = client.calls_of("iter_download")
    assert args == (
        types.InputDocumentFileLocation(id=300, access_hash=2100, file_reference=b"\x0a\x0b", thumb_size=""),
    )
    assert kwargs == {"offset": 0, "request_size": PART_SIZE, "limit": 3, "dc_id": 4}
    assert [len(chunk) for chunk in chunks] == [PART_SIZE, PART_SIZE, len(FILE) - 2 * PART_SIZE]
    assert all(type(chunk) is bytes for chunk in chunks)
    assert b"".join(chunks) == FILE


def test_iter_download_resumes_from_an_offset_inside_a_part():
    client = StandInClient()
    client.file_bytes = FILE

    chunks = run(client, lambda gateway: collect(gateway.iter_download(CHANNEL, DOWNLOADED, offset=600_000)))

    [(_, kwargs)] = client.calls_of("iter_download")
    assert (kwargs["offset"], kwargs["limit"]) == (PART_SIZE, 2)  # requests stay on part boundaries
    assert b"".join(chunks) == FILE[600_000:]


def test_iter_download_of_a_complete_file_requests_nothing():
    client = StandInClient()

    chunks = run(client, lambda gateway: collect(gateway.iter_download(CHANNEL, DOWNLOADED, offset=len(FILE))))

    assert chunks == [] and client.calls_of("iter_download") == []


def test_iter_download_reports_an_expired_file_reference():
    client = StandInClient()
    client.file_bytes = FILE
    client.download_error_after = (1, errors.FileReferenceExpiredError(request=None))
    received = []

    async def download(gateway):
        async for chunk in gateway.iter_download(CHANNEL, DOWNLOADED):
            received.append(chunk)

    with pytest.raises(FileReferenceExpired):
        run(client, download)
    assert len(received) == 1  # the caller resumes from this offset with a re-fetched message


# Uploads and sends


def test_upload_document_posts_the_file_in_a_topic(tmp_path):
    path = tmp_path / "dragon.zip"
    path.write_bytes(b"PK" * 100)
    client = StandInClient()
    client.results["get_me"] = user()
    client.results["upload_file"] = types.InputFile(id=1, parts=1, name="dragon.zip", md5_checksum="")
    client.answer(functions.messages.SendMediaRequest, sent_updates(901, random_id=777))

    sent = run(
        client,
        lambda gateway: gateway.upload_document(
            CHANNEL, path=str(path), file_name="dragon.zip", random_id=777, caption="Dragon", topic_id=42
        ),
    )

    assert client.calls_of("upload_file") == [((str(path),), {"part_size_kb": 512, "file_name": "dragon.zip"})]
    assert client.requests_of(functions.messages.SendMediaRequest) == [
        functions.messages.SendMediaRequest(
            peer=types.InputPeerChannel(1001, 555),
            media=types.InputMediaUploadedDocument(
                file=types.InputFile(id=1, parts=1, name="dragon.zip", md5_checksum=""),
                mime_type="application/zip",
                attributes=[types.DocumentAttributeFilename("dragon.zip")],
                force_file=True,
            ),
            message="Dragon",
            random_id=777,
            reply_to=types.InputReplyToMessage(reply_to_msg_id=42, top_msg_id=42),
        )
    ]
    assert sent == SentMessage(chat_id=1001, id=901, random_id=777, date=DATE)


def test_upload_document_above_the_accounts_limit_is_refused_before_uploading(tmp_path):
    path = tmp_path / "huge.7z.001"
    with path.open("wb") as file:
        file.truncate(UPLOAD_MAX_BYTES + 1)  # sparse: no disk used
    client = StandInClient()
    client.results["get_me"] = user(premium=False)

    with pytest.raises(FileTooLarge, match="huge.7z.001"):
        run(client, lambda gateway: gateway.upload_document(CHANNEL, path=str(path), file_name=path.name, random_id=1))
    assert client.calls_of("upload_file") == []


def test_upload_document_of_a_premium_account_to_general(tmp_path):
    path = tmp_path / "huge.7z.001"
    with path.open("wb") as file:
        file.truncate(UPLOAD_MAX_BYTES + 1)
    client = StandInClient()
    client.results["get_me"] = user(premium=True)
    client.results["upload_file"] = types.InputFileBig(id=1, parts=4001, name=path.name)
    client.answer(functions.messages.SendMediaRequest, sent_updates(5, random_id=2))

    sent = run(
        client,
        lambda gateway: gateway.upload_document(CHANNEL, path=str(path), file_name=path.name, random_id=2, topic_id=1),
    )

    assert client.requests_of(functions.messages.SendMediaRequest)[0].reply_to is None
    assert sent.id == 5


def test_upload_document_parts_refused_by_telegram(tmp_path):
    path = tmp_path / "a.zip"
    path.write_bytes(b"PK")
    client = StandInClient()
    client.results["get_me"] = user()
    client.results["upload_file"] = errors.FilePartsInvalidError(request=None)

    with pytest.raises(FileTooLarge):
        run(client, lambda gateway: gateway.upload_document(CHANNEL, path=str(path), file_name="a.zip", random_id=1))


@pytest.mark.parametrize("method", ["upload_document", "send_message"])
def test_a_duplicate_random_id_counts_as_sent(tmp_path, method):
    path = tmp_path / "a.zip"
    path.write_bytes(b"PK")
    client = StandInClient()
    client.results["get_me"] = user()
    client.results["upload_file"] = types.InputFile(id=1, parts=1, name="a.zip", md5_checksum="")
    client.answer(functions.messages.SendMediaRequest, errors.RandomIdDuplicateError(request=None))
    client.answer(functions.messages.SendMessageRequest, errors.RandomIdDuplicateError(request=None))

    if method == "upload_document":
        sent = run(client, lambda gw: gw.upload_document(CHANNEL, path=str(path), file_name="a.zip", random_id=9))
    else:
        sent = run(client, lambda gw: gw.send_message(CHANNEL, random_id=9, text="again"))

    assert sent == SentMessage(chat_id=1001, id=None, random_id=9, duplicate=True)


def test_upload_media_returns_a_reusable_photo_handle(tmp_path):
    path = tmp_path / "preview.jpg"
    path.write_bytes(b"\xff\xd8")
    client = StandInClient()
    client.results["upload_file"] = types.InputFile(id=3, parts=1, name="preview.jpg", md5_checksum="")
    client.answer(
        functions.messages.UploadMediaRequest,
        types.MessageMediaPhoto(
            photo=types.Photo(id=61, access_hash=62, file_reference=b"\x01\x02", date=DATE, sizes=[], dc_id=2)
        ),
    )

    handle = run(client, lambda gw: gw.upload_media(path=str(path), file_name="preview.jpg", mime_type="image/jpeg"))

    assert client.requests == [
        functions.messages.UploadMediaRequest(
            peer=types.InputPeerSelf(),
            media=types.InputMediaUploadedPhoto(
                file=types.InputFile(id=3, parts=1, name="preview.jpg", md5_checksum="")
            ),
        )
    ]
    assert handle == MediaHandle(kind="photo", payload={"id": 61, "access_hash": 62, "file_reference": "0102"})
    assert json.loads(json.dumps(handle.payload)) == handle.payload


def test_upload_media_of_a_document_and_reuse_in_every_group(tmp_path):
    path = tmp_path / "guide.pdf"
    path.write_bytes(b"%PDF")
    client = StandInClient()
    client.results["upload_file"] = types.InputFile(id=4, parts=1, name="guide.pdf", md5_checksum="")
    client.answer(
        functions.messages.UploadMediaRequest,
        types.MessageMediaDocument(document=document(id=71, name="guide.pdf", file_reference=b"\x09")),
    )
    client.answer(
        functions.messages.SendMediaRequest,
        types.UpdateShortSentMessage(id=1, pts=1, pts_count=1, date=DATE),
        types.UpdateShortSentMessage(id=2, pts=2, pts_count=1, date=DATE),
    )
    groups = [ChatRef(id=501, type="group"), ChatRef(id=502, type="group")]

    async def upload_then_send(gateway):
        handle = await gateway.upload_media(path=str(path), file_name="guide.pdf", mime_type="application/pdf")
        return [
            await gateway.send_message(group, random_id=10 + index, text="Read me", media=handle)
            for index, group in enumerate(groups)
        ]

    sent = run(client, upload_then_send)

    upload = client.requests_of(functions.messages.UploadMediaRequest)[0]
    assert upload.media == types.InputMediaUploadedDocument(
        file=types.InputFile(id=4, parts=1, name="guide.pdf", md5_checksum=""),
        mime_type="application/pdf",
        attributes=[types.DocumentAttributeFilename("guide.pdf")],
    )
    sends = client.requests_of(functions.messages.SendMediaRequest)
    reused = types.InputMediaDocument(id=types.InputDocument(id=71, access_hash=497, file_reference=b"\x09"))
    assert [(s.peer, s.media, s.message, s.random_id) for s in sends] == [
        (types.InputPeerChat(501), reused, "Read me", 10),
        (types.InputPeerChat(502), reused, "Read me", 11),
    ]
    assert [(m.chat_id, m.id) for m in sent] == [(501, 1), (502, 2)]


def test_send_message_with_text_to_a_topic():
    client = StandInClient()
    client.answer(functions.messages.SendMessageRequest, sent_updates(321, random_id=55))

    sent = run(client, lambda gw: gw.send_message(CHANNEL, random_id=55, text="Reminder", topic_id=42))

    assert client.requests == [
        functions.messages.SendMessageRequest(
            peer=types.InputPeerChannel(1001, 555),
            message="Reminder",
            random_id=55,
            reply_to=types.InputReplyToMessage(reply_to_msg_id=42, top_msg_id=42),
        )
    ]
    assert sent == SentMessage(chat_id=1001, id=321, random_id=55, date=DATE)


def test_send_message_with_a_photo_handle():
    client = StandInClient()
    client.answer(functions.messages.SendMediaRequest, sent_updates(322, random_id=56))
    handle = MediaHandle(kind="photo", payload={"id": 61, "access_hash": 62, "file_reference": "0102"})

    run(client, lambda gw: gw.send_message(CHANNEL, random_id=56, media=handle))

    [request] = client.requests
    assert request.media == types.InputMediaPhoto(
        id=types.InputPhoto(id=61, access_hash=62, file_reference=b"\x01\x02")
    )
    assert (request.message, request.reply_to) == ("", None)


@pytest.mark.parametrize(
    ("telethon_error", "expected", "rpc"),
    [
        (errors.FloodWaitError(request=None, capture=30), FloodWait, "FLOOD_WAIT"),
        (errors.SlowModeWaitError(request=None, capture=10), FloodWait, "SLOWMODE_WAIT"),
        (errors.ChatWriteForbiddenError(request=None), TargetForbidden, "CHAT_WRITE_FORBIDDEN"),
        (errors.RpcCallFailError(request=None), TransientError, "RPC_CALL_FAIL"),
    ],
)
def test_send_message_errors_leave_mapped(telethon_error, expected, rpc):
    client = StandInClient()
    client.answer(functions.messages.SendMessageRequest, telethon_error)

    with pytest.raises(expected) as raised:
        run(client, lambda gw: gw.send_message(GROUP, random_id=1, text="hi"))

    assert raised.value.rpc == rpc
    assert raised.value.__cause__ is telethon_error

"""Sandbox reading: chats and access hashes, batched last ids, topics, document search, downloads."""

import pytest

from telegram.errors import FileReferenceExpired, NotFound, TargetForbidden
from telegram.records import ChatRef
from telegram.sandbox import world as sandbox_world
from telegram.sandbox.world import chat_access_hash

READER, WRITER = "+15550000001", "+15550000002"
ACCOUNTS = [{"phone": READER}, {"phone": WRITER}]


def ref(phone: str, chat_id: int, type: str = "channel") -> ChatRef:
    return ChatRef(id=chat_id, access_hash=chat_access_hash(phone=phone, chat_id=chat_id, type=type), type=type)


def doc(message_id: int, size: int = 10, **extra) -> dict:
    return {"id": message_id, "document": {"name": f"file{message_id}.bin", "size": size}, **extra}


def test_list_chats_gives_per_account_access_hashes_and_who_can_post(sandbox, sandbox_run):
    world = sandbox(
        {
            "accounts": ACCOUNTS,
            "chats": [
                {"id": 1, "title": "Source", "type": "channel", "members": [READER, WRITER]},
                {"id": 2, "title": "Destination", "type": "channel", "admins": [WRITER]},
                {"id": 3, "title": "Group", "type": "group", "members": [READER]},
                {"id": 4, "title": "Read-only", "type": "supergroup", "members": [READER], "members_can_post": False},
                {"id": 5, "title": "Elsewhere", "type": "channel", "members": [WRITER]},
                {
                    "id": 6,
                    "title": "Forum",
                    "type": "supergroup",
                    "forum": True,
                    "members": [READER],
                    "slow_mode_seconds": 30,
                },
            ],
        }
    )

    reader = {chat.id: chat for chat in sandbox_run(world, READER, lambda gateway: gateway.list_chats())}
    writer = {chat.id: chat for chat in sandbox_run(world, WRITER, lambda gateway: gateway.list_chats())}

    assert sorted(reader) == [1, 3, 4, 6]
    assert sorted(writer) == [1, 2, 5]
    assert reader[1].access_hash != writer[1].access_hash
    assert reader[1].access_hash == chat_access_hash(phone=READER, chat_id=1, type="channel")
    assert reader[3].access_hash == 0  # basic groups have no access hash in Telegram
    assert {chat_id: chat.can_post for chat_id, chat in reader.items()} == {1: False, 3: True, 4: False, 6: True}
    assert writer[2].can_post is True
    assert (reader[6].forum, reader[6].slow_mode_seconds, reader[6].type) == (True, 30, "supergroup")


@pytest.mark.parametrize(
    "chat",
    [
        ChatRef(id=1, access_hash=12345),
        ref(WRITER, 1),  # another account's hash
        ref(READER, 5),  # a chat the reader is not in
        ref(READER, 404),
    ],
)
def test_a_wrong_access_hash_or_a_foreign_chat_is_forbidden(sandbox, sandbox_run, chat):
    world = sandbox(
        {
            "accounts": ACCOUNTS,
            "chats": [
                {"id": 1, "type": "channel", "members": [READER, WRITER], "messages": [doc(1)]},
                {"id": 5, "type": "channel", "members": [WRITER]},
            ],
        }
    )

    for action in (
        lambda gateway: gateway.search_documents(chat, min_id=0),
        lambda gateway: gateway.get_messages(chat, [1]),
        lambda gateway: gateway.list_topics(chat),
        lambda gateway: gateway.get_last_message_ids([chat]),
        lambda gateway: gateway.send_message(chat, random_id=1, text="hi"),
    ):
        with pytest.raises(TargetForbidden):
            sandbox_run(world, READER, action)


def test_last_message_ids_take_one_request_per_hundred_chats(sandbox, sandbox_run):
    chats = [
        {"id": chat_id, "type": "channel", "members": [READER], "messages": [{"id": chat_id % 7 + 1, "text": "x"}]}
        for chat_id in range(1, 251)
    ]
    world = sandbox({"accounts": ACCOUNTS, "chats": [*chats, {"id": 999, "type": "channel", "members": [READER]}]})
    refs = [ref(READER, chat_id) for chat_id in [*range(1, 251), 999]]

    last = sandbox_run(world, READER, lambda gateway: gateway.get_last_message_ids(refs))

    assert last == {chat_id: chat_id % 7 + 1 for chat_id in range(1, 251)} | {999: 0}
    assert world.stats()["calls"][READER]["get_last_message_ids"] == 3


def test_topics_come_a_hundred_a_page_in_id_order(sandbox, sandbox_run):
    topics = [{"id": topic_id, "title": f"Topic {topic_id}"} for topic_id in range(2, 152)]
    world = sandbox(
        {
            "accounts": ACCOUNTS,
            "chats": [
                {
                    "id": 7,
                    "type": "supergroup",
                    "forum": True,
                    "members": [READER],
                    "topics": topics,
                    "messages": [{"id": 500, "topic": 120, "text": "a"}, doc(501, topic=120), {"id": 502, "text": "g"}],
                },
                {"id": 8, "type": "channel", "members": [READER]},
            ],
        }
    )
    forum = ref(READER, 7, "supergroup")

    first = sandbox_run(world, READER, lambda gateway: gateway.list_topics(forum))
    second = sandbox_run(world, READER, lambda gateway: gateway.list_topics(forum, offset_topic_id=first[-1].id))

    assert [topic.id for topic in first] == list(range(1, 101))
    assert (first[0].title, first[0].top_message_id) == ("General", 502)
    assert [topic.id for topic in second] == list(range(101, 152))
    assert {topic.id: topic.top_message_id for topic in second}[120] == 501
    assert {topic.id: topic.top_message_id for topic in second}[121] == 0
    assert sandbox_run(world, READER, lambda gateway: gateway.list_topics(ref(READER, 8))) == []
    assert world.stats()["calls"][READER]["list_topics"] == 3


def test_search_documents_filters_by_id_range_and_topic_newest_first(sandbox, sandbox_run):
    world = sandbox(
        {
            "accounts": ACCOUNTS,
            "chats": [
                {
                    "id": 7,
                    "type": "channel",
                    "forum": True,
                    "members": [READER],
                    "topics": [{"id": 42, "title": "Dragons"}],
                    "messages": [
                        doc(2),
                        {"id": 3, "text": "text only"},
                        {"id": 4, "photo": {"caption": "a photo"}},
                        doc(5, topic=42, text="caption"),
                        doc(6, topic=1),
                        doc(7, topic=42),
                    ],
                }
            ],
        }
    )
    chat = ref(READER, 7)

    def ids(**query):
        return [message.id for message in sandbox_run(world, READER, lambda g: g.search_documents(chat, **query))]

    assert ids(min_id=0) == [7, 6, 5, 2]
    assert ids(min_id=2, max_id=7) == [6, 5]
    assert ids(min_id=0, topic_id=42) == [7, 5]
    assert ids(min_id=0, topic_id=1) == [6, 2]
    found = sandbox_run(world, READER, lambda gateway: gateway.search_documents(chat, min_id=4, max_id=6))
    [message] = found
    assert (message.chat_id, message.topic_id, message.text, message.date.year) == (7, 42, "caption", 2024)
    assert (message.document.name, message.document.size, message.document.location["message"]) == ("file5.bin", 10, 5)
    assert world.stats()["calls"][READER]["search_documents"] == 5


def test_search_documents_returns_at_most_a_hundred(sandbox, sandbox_run):
    world = sandbox(
        {"accounts": ACCOUNTS, "chats": [{"id": 7, "members": [READER], "messages": [doc(i) for i in range(1, 131)]}]}
    )
    chat = ref(READER, 7)

    page = sandbox_run(world, READER, lambda gateway: gateway.search_documents(chat, min_id=0))
    rest = sandbox_run(world, READER, lambda gateway: gateway.search_documents(chat, min_id=0, max_id=page[-1].id))

    assert [message.id for message in page] == list(range(130, 30, -1))
    assert [message.id for message in rest] == list(range(30, 0, -1))


def test_get_messages_gives_fresh_copies_and_none_for_what_is_gone(sandbox, sandbox_run):
    world = sandbox(
        {
            "accounts": ACCOUNTS,
            "chats": [{"id": 7, "members": [READER], "messages": [{"id": 1, "text": "hi"}, doc(2), doc(3)]}],
        }
    )
    world.message_delete(7, 3)

    found = sandbox_run(world, READER, lambda gateway: gateway.get_messages(ref(READER, 7), [1, 2, 3, 99]))

    assert (found[1].text, found[1].document) == ("hi", None)
    assert found[2].document.location["message"] == 2
    assert found[3] is None and found[99] is None
    assert world.stats()["calls"][READER]["get_messages"] == 1


def test_file_references_expire_and_a_refetch_renews_them(sandbox, sandbox_run, monkeypatch):
    world = sandbox(
        {
            "accounts": ACCOUNTS,
            "limits": {"file_reference_ttl_seconds": 60},
            "chats": [{"id": 7, "members": [READER], "messages": [doc(2, size=1000)]}],
        }
    )
    chat = ref(READER, 7)
    [old] = sandbox_run(world, READER, lambda gateway: gateway.search_documents(chat, min_id=0))
    later = sandbox_world.clock() + 61
    monkeypatch.setattr(sandbox_world, "clock", lambda: later)

    async def download(gateway, document):
        return b"".join([chunk async for chunk in gateway.iter_download(chat, document)])

    with pytest.raises(FileReferenceExpired):
        sandbox_run(world, READER, lambda gateway: download(gateway, old.document))
    fresh = sandbox_run(world, READER, lambda gateway: gateway.get_messages(chat, [2]))[2]
    assert sandbox_run(world, READER, lambda gateway: download(gateway, fresh.document)) == world.message_bytes(7, 2)


def test_a_download_of_a_deleted_message_is_not_found(sandbox, sandbox_run):
    world = sandbox({"accounts": ACCOUNTS, "chats": [{"id": 7, "members": [READER], "messages": [doc(2)]}]})
    chat = ref(READER, 7)
    message = sandbox_run(world, READER, lambda gateway: gateway.get_messages(chat, [2]))[2]
    world.message_delete(7, 2)

    async def download(gateway):
        return [chunk async for chunk in gateway.iter_download(chat, message.document)]

    with pytest.raises(NotFound):
        sandbox_run(world, READER, download)


def test_downloads_count_one_request_a_part_and_keep_to_the_bandwidth(sandbox, sandbox_run, monkeypatch):
    world = sandbox(
        {
            "accounts": [{"phone": READER, "bandwidth_bytes_per_s": 1_000_000}],
            "chats": [{"id": 7, "members": [READER], "messages": [doc(2, size=1_200_000)]}],
        }
    )
    chat = ref(READER, 7)
    slept = []

    async def fake_sleep(seconds):
        slept.append(seconds)

    monkeypatch.setattr("telegram.sandbox.gateway.asyncio.sleep", fake_sleep)

    async def download(gateway):
        message = (await gateway.get_messages(chat, [2]))[2]
        return [chunk async for chunk in gateway.iter_download(chat, message.document)]

    chunks = sandbox_run(world, READER, download)

    assert [len(chunk) for chunk in chunks] == [524288, 524288, 151424]
    assert sum(slept) == pytest.approx(1.2)
    assert world.stats()["calls"][READER]["iter_download"] == 3

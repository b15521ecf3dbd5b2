"""Reading from the sandbox server through the Telethon gateway: chats and access hashes, batched last
ids, topics, document search and its paging quirks, messages by id, downloads."""

import time

import pytest

from telegram.errors import FileReferenceExpired, TargetForbidden, TelegramError
from telegram.records import PART_SIZE, ChatRef
from telegram.sandbox.world import chat_access_hash
from tests.support.sandbox import ref, search_all

READER, WRITER = "+15550000001", "+15550000002"
ACCOUNTS = [{"phone": READER}, {"phone": WRITER}]


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
        lambda gateway: gateway.send_message(chat, random_id=1, text="hi"),
    ):
        with pytest.raises(TargetForbidden):
            sandbox_run(world, READER, action)
    # A batch of last ids leaves such a chat out (its scan reports the error).
    assert sandbox_run(world, READER, lambda gateway: gateway.get_last_message_ids([chat])) == {}


def test_last_message_ids_take_one_request_per_hundred_chats(sandbox, sandbox_run):
    chats = [
        {"id": chat_id, "type": "channel", "members": [READER], "messages": [{"id": chat_id % 7 + 2, "text": "x"}]}
        for chat_id in range(1, 251)
    ]
    world = sandbox({"accounts": ACCOUNTS, "chats": [*chats, {"id": 999, "type": "channel", "members": [READER]}]})
    refs = [ref(READER, chat_id) for chat_id in [*range(1, 251), 999]]

    last = sandbox_run(world, READER, lambda gateway: gateway.get_last_message_ids(refs))

    # An empty channel's last message is the service message that created it, id 1.
    assert last == {chat_id: chat_id % 7 + 2 for chat_id in range(1, 251)} | {999: 1}
    assert world.stats()["calls"][READER]["messages.getPeerDialogs"] == 3


def test_last_message_ids_leave_out_chats_the_account_cannot_see(sandbox, sandbox_run):
    # Telegram fails a whole GetPeerDialogs batch for one chat the account left: the batch is halved around it.
    chats = [
        {"id": chat_id, "members": [READER], "messages": [{"id": 10 + chat_id, "text": "x"}]} for chat_id in (1, 2, 4)
    ]
    world = sandbox({"accounts": ACCOUNTS, "chats": [*chats, {"id": 3, "members": [WRITER]}]})
    refs = [ref(READER, chat_id) for chat_id in (1, 2, 3, 4)]

    last = sandbox_run(world, READER, lambda gateway: gateway.get_last_message_ids(refs))

    assert last == {1: 11, 2: 12, 4: 14}
    assert world.stats()["calls"][READER]["messages.getPeerDialogs"] == 5  # 4 chats, then 2 and 2, then 1 and 1


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

    async def two_pages(gateway):
        first = await gateway.list_topics(forum)
        return first, await gateway.list_topics(forum, offset_topic_id=first[-1].id)

    first, second = sandbox_run(world, READER, two_pages)

    assert [topic.id for topic in first] == list(range(1, 101))
    assert (first[0].title, first[0].top_message_id) == ("General", 502)
    assert [topic.id for topic in second] == list(range(101, 152))
    assert {topic.id: topic.top_message_id for topic in second}[120] == 501
    # Telegram pages topics by activity: the gateway reads them all (two requests), then pages from memory.
    assert world.stats()["calls"][READER]["messages.getForumTopics"] == 2
    with pytest.raises(TelegramError) as not_forum:
        sandbox_run(world, READER, lambda gateway: gateway.list_topics(ref(READER, 8)))
    assert not_forum.value.rpc == "CHANNEL_FORUM_MISSING"


def test_search_documents_filters_by_id_range_and_topic_newest_first(sandbox, sandbox_run):
    world = sandbox(
        {
            "accounts": ACCOUNTS,
            "chats": [
                {
                    "id": 7,
                    "type": "supergroup",
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
    chat = ref(READER, 7, "supergroup")

    def ids(**query):
        page = sandbox_run(world, READER, lambda gateway: gateway.search_documents(chat, **query))
        return [message.id for message in page.messages]

    assert ids(min_id=0) == [7, 6, 5, 2]
    assert ids(min_id=2, offset_id=7) == [6, 5]
    assert ids(min_id=0, topic_id=42) == [7, 5]
    assert ids(min_id=0, topic_id=1) == [6, 2]
    page = sandbox_run(world, READER, lambda gateway: gateway.search_documents(chat, min_id=4, offset_id=6))
    [message] = page.messages
    assert (message.chat_id, message.topic_id, message.text, message.date.year) == (7, 42, "caption", 2024)
    assert (message.document.name, message.document.size) == ("file5.bin", 10)
    assert message.document.id == world.message(7, 5)["document_id"]
    assert page.next_offset_id is None  # the page reached min_id
    assert world.stats()["calls"][READER]["messages.search"] == 5


def test_search_documents_pages_a_hundred_at_a_time(sandbox, sandbox_run):
    world = sandbox(
        {"accounts": ACCOUNTS, "chats": [{"id": 7, "members": [READER], "messages": [doc(i) for i in range(1, 131)]}]}
    )
    chat = ref(READER, 7)

    async def two_pages(gateway):
        page = await gateway.search_documents(chat, min_id=0)
        return page, await gateway.search_documents(chat, min_id=0, offset_id=page.next_offset_id)

    page, rest = sandbox_run(world, READER, two_pages)

    assert [message.id for message in page.messages] == list(range(130, 30, -1))
    assert page.next_offset_id == 31
    assert [message.id for message in rest.messages] == list(range(30, 0, -1))
    assert rest.next_offset_id is None


@pytest.mark.parametrize("min_id", [0, 1, 37, 150, 199, 240, 259, 260])
def test_paging_finds_every_document_despite_short_pages_and_min_id_near_the_top(sandbox, sandbox_run, min_id):
    messages = [doc(i) if i % 3 else {"id": i, "text": "chatter"} for i in range(1, 261)]
    world = sandbox(
        {
            "accounts": ACCOUNTS,
            "quirks": {"short_search_pages": True, "search_min_id_near_top": True},
            "chats": [{"id": 7, "members": [READER], "messages": messages}],
        }
    )

    found = sandbox_run(world, READER, lambda gateway: search_all(gateway, ref(READER, 7), min_id=min_id))

    assert found == [i for i in range(260, min_id, -1) if i % 3]


def test_paging_a_forum_topic_with_short_pages_finds_every_document(sandbox, sandbox_run):
    messages = [doc(i, topic=42 if i % 2 else 1) for i in range(1, 201)]
    world = sandbox(
        {
            "accounts": ACCOUNTS,
            "quirks": {"short_search_pages": True, "search_min_id_near_top": True},
            "chats": [
                {
                    "id": 7,
                    "type": "supergroup",
                    "forum": True,
                    "members": [READER],
                    "topics": [{"id": 42, "title": "Dragons"}],
                    "messages": messages,
                }
            ],
        }
    )
    chat = ref(READER, 7, "supergroup")

    found = sandbox_run(world, READER, lambda gateway: search_all(gateway, chat, min_id=50, topic_id=42))

    assert found == [i for i in range(200, 50, -1) if i % 2]


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
    assert found[2].document.id == world.message(7, 2)["document_id"]
    assert found[3] is None and found[99] is None
    assert world.stats()["calls"][READER]["channels.getMessages"] == 1


def test_get_messages_asks_a_hundred_ids_a_request(sandbox, sandbox_run):
    world = sandbox({"accounts": ACCOUNTS, "chats": [{"id": 7, "members": [READER], "messages": [doc(1), doc(150)]}]})

    found = sandbox_run(world, READER, lambda gateway: gateway.get_messages(ref(READER, 7), list(range(1, 151))))

    assert sorted(found) == list(range(1, 151))
    assert [message_id for message_id, message in found.items() if message] == [1, 150]
    assert world.stats()["calls"][READER]["channels.getMessages"] == 2


def test_get_messages_of_a_basic_group_ignores_the_accounts_other_groups(sandbox, sandbox_run):
    # Basic groups share the account's message box: Telegram answers an id from whichever group has it.
    world = sandbox(
        {
            "accounts": ACCOUNTS,
            "chats": [
                {"id": 77, "type": "group", "members": [READER], "messages": [doc(5)]},
                {"id": 78, "type": "group", "members": [READER], "messages": [doc(5), doc(6)]},
            ],
        }
    )

    found = sandbox_run(world, READER, lambda gateway: gateway.get_messages(ref(READER, 77, "group"), [5, 6]))

    assert found[5].chat_id == 77 and found[5].document.id == world.message(77, 5)["document_id"]
    assert found[6] is None
    assert world.stats()["calls"][READER]["messages.getMessages"] == 1


async def download(gateway, chat, document, offset=0) -> list[memoryview]:
    return [chunk async for chunk in gateway.iter_download(chat, document, offset=offset)]


def test_file_references_expire_and_a_refetch_renews_them(sandbox, sandbox_run, sandbox_clock):
    world = sandbox(
        {
            "accounts": ACCOUNTS,
            "limits": {"file_reference_ttl_seconds": 60},
            "chats": [{"id": 7, "members": [READER], "messages": [doc(2, size=1000)]}],
        }
    )
    chat = ref(READER, 7)
    start = time.time()
    sandbox_clock(start)
    [old] = sandbox_run(world, READER, lambda gateway: gateway.search_documents(chat, min_id=0)).messages
    sandbox_clock(start + 61)

    with pytest.raises(FileReferenceExpired):
        sandbox_run(world, READER, lambda gateway: download(gateway, chat, old.document))
    fresh = sandbox_run(world, READER, lambda gateway: gateway.get_messages(chat, [2]))[2]
    assert b"".join(sandbox_run(world, READER, lambda g: download(g, chat, fresh.document))) == world.message_bytes(
        7, 2
    )


def test_a_reference_that_expires_mid_download_resumes_from_the_bytes_held(sandbox, sandbox_run):
    world = sandbox(
        {"accounts": ACCOUNTS, "chats": [{"id": 7, "members": [READER], "messages": [doc(2, size=1_300_000)]}]}
    )
    world.fault_add({"op": "download", "error": "file_reference_expired", "after": 1})
    chat = ref(READER, 7)
    received = []

    async def download_until_expired(gateway):
        message = (await gateway.get_messages(chat, [2]))[2]
        async for chunk in gateway.iter_download(chat, message.document):
            received.append(chunk)

    with pytest.raises(FileReferenceExpired):
        sandbox_run(world, READER, download_until_expired)
    assert [len(chunk) for chunk in received] == [PART_SIZE]

    async def resume(gateway):
        message = (await gateway.get_messages(chat, [2]))[2]
        return await download(gateway, chat, message.document, offset=len(received[0]))

    assert b"".join([received[0], *sandbox_run(world, READER, resume)]) == world.message_bytes(7, 2)


def test_a_download_of_a_deleted_message_is_not_possible(sandbox, sandbox_run):
    world = sandbox({"accounts": ACCOUNTS, "chats": [{"id": 7, "members": [READER], "messages": [doc(2)]}]})
    chat = ref(READER, 7)
    message = sandbox_run(world, READER, lambda gateway: gateway.get_messages(chat, [2]))[2]
    world.message_delete(7, 2)

    # Telegram answers FILE_REFERENCE_EXPIRED; the re-fetch the caller then makes finds the message gone.
    with pytest.raises(FileReferenceExpired):
        sandbox_run(world, READER, lambda gateway: download(gateway, chat, message.document))
    assert sandbox_run(world, READER, lambda gateway: gateway.get_messages(chat, [2])) == {2: None}


def test_downloads_count_one_request_a_part_and_keep_to_the_bandwidth(sandbox, sandbox_run):
    world = sandbox(
        {
            "accounts": [{"phone": READER, "bandwidth_bytes_per_s": 1_000_000}],
            "chats": [{"id": 7, "members": [READER], "messages": [doc(2, size=1_200_000)]}],
        }
    )
    chat = ref(READER, 7)
    message = sandbox_run(world, READER, lambda gateway: gateway.get_messages(chat, [2]))[2]

    started = time.monotonic()
    chunks = sandbox_run(world, READER, lambda gateway: download(gateway, chat, message.document))
    elapsed = time.monotonic() - started

    assert [len(chunk) for chunk in chunks] == [524288, 524288, 151424]
    assert 1.15 <= elapsed < 5
    assert world.stats()["calls"][READER]["upload.getFile"] == 3


def test_a_download_resumed_at_the_end_asks_for_nothing(sandbox, sandbox_run):
    world = sandbox({"accounts": ACCOUNTS, "chats": [{"id": 7, "members": [READER], "messages": [doc(2, size=3000)]}]})
    chat = ref(READER, 7)
    message = sandbox_run(world, READER, lambda gateway: gateway.get_messages(chat, [2]))[2]

    assert sandbox_run(world, READER, lambda gateway: download(gateway, chat, message.document, offset=3000)) == []
    assert "upload.getFile" not in world.stats()["calls"][READER]

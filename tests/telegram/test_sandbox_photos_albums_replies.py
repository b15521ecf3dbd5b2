"""Photos, albums and replies through the Telethon gateway on the sandbox server: a photo is a real
picture that downloads, the photos near an archive are found in one request (window and topic), and a
message says its album (grouped_id) and the message it answers."""

import io
from datetime import UTC, datetime, timedelta

from PIL import Image

from tests.support.sandbox import ref

READER = "+15550000001"


def world_of(sandbox):
    return sandbox(
        {
            "accounts": [{"phone": READER}],
            "chats": [
                {
                    "id": 7,
                    "type": "supergroup",
                    "forum": True,
                    "members": [READER],
                    "topics": [{"id": 42, "title": "Dragons"}, {"id": 43, "title": "Knights"}],
                    "messages": [
                        {"id": 100, "topic": 42, "photo": {"caption": "red dragon"}, "album": 9},
                        {"id": 101, "topic": 42, "document": {"name": "red-dragon.zip", "size": 10}, "album": 9},
                        {"id": 102, "topic": 43, "photo": {"caption": "knight"}},
                        {
                            "id": 103,
                            "topic": 42,
                            "document": {"name": "red-dragon-v2.zip", "size": 10},
                            "reply_to": 101,
                        },
                        {"id": 4000, "topic": 42, "photo": {"caption": "far later"}},
                    ],
                }
            ],
        }
    )


def test_photos_since_a_date_come_channel_wide_with_their_topics(sandbox, sandbox_run):
    world = world_of(sandbox)
    chat = ref(READER, 7, "supergroup")

    async def photos(gateway):
        [archive] = (await gateway.get_messages(chat, [101])).values()
        return archive, await gateway.search_photos(chat, min_date=archive.date - timedelta(seconds=1))

    archive, page = sandbox_run(world, READER, photos)
    assert [(photo.id, photo.topic_id) for photo in page.messages] == [(4000, 42), (102, 43), (100, 42)]
    assert page.next_offset_id is None
    first = page.messages[-1]
    assert (first.text, first.grouped_id, first.document) == ("red dragon", 9, None)
    assert archive.grouped_id == 9 and archive.photo is None
    later = sandbox_run(world, READER, lambda gateway: gateway.search_photos(chat, min_date=archive.date))
    assert [photo.id for photo in later.messages] == [4000, 102]
    assert world.stats()["calls"][READER]["messages.search"] == 2


def test_photos_come_a_hundred_a_page(sandbox, sandbox_run):
    photos = [{"id": n, "photo": {"caption": f"p{n}", "seed": "same"}} for n in range(1, 131)]
    world = sandbox({"accounts": [{"phone": READER}], "chats": [{"id": 8, "members": [READER], "messages": photos}]})
    chat = ref(READER, 8)
    since = datetime(2020, 1, 1, tzinfo=UTC)

    async def every(gateway):
        ids, offset_id = [], 0
        while True:
            page = await gateway.search_photos(chat, min_date=since, offset_id=offset_id)
            ids += [photo.id for photo in page.messages]
            if page.next_offset_id is None:
                return ids
            offset_id = page.next_offset_id

    assert sandbox_run(world, READER, every) == list(range(130, 0, -1))
    assert world.stats()["calls"][READER]["messages.search"] <= 3


def test_a_photo_downloads_as_a_real_picture(sandbox, sandbox_run):
    world = world_of(sandbox)
    chat = ref(READER, 7, "supergroup")

    async def download(gateway):
        photo = (await gateway.get_messages(chat, [100]))[100].photo
        return photo, b"".join([chunk async for chunk in gateway.iter_download(chat, photo)])

    photo, data = sandbox_run(world, READER, download)
    assert (photo.name, photo.mime_type, photo.size) == ("photo.jpg", "image/jpeg", len(data))
    assert data == world.message_bytes(7, 100)
    with Image.open(io.BytesIO(data)) as image:
        assert (image.format, image.size) == ("JPEG", (640, 480))


def test_a_reply_names_the_message_it_answers_not_its_topic(sandbox, sandbox_run):
    world = world_of(sandbox)
    chat = ref(READER, 7, "supergroup")
    messages = sandbox_run(world, READER, lambda gateway: gateway.get_messages(chat, [101, 103]))
    assert (messages[103].reply_to_id, messages[103].topic_id, messages[103].grouped_id) == (101, 42, None)
    assert (messages[101].reply_to_id, messages[101].topic_id) == (None, 42)


def test_a_reply_outside_a_forum(sandbox, sandbox_run):
    world = sandbox(
        {
            "accounts": [{"phone": READER}],
            "chats": [
                {
                    "id": 8,
                    "members": [READER],
                    "messages": [{"id": 5, "text": "models below"}, {"id": 6, "text": "here", "reply_to": 5}],
                }
            ],
        }
    )
    chat = ref(READER, 8)
    messages = sandbox_run(world, READER, lambda gateway: gateway.get_messages(chat, [5, 6]))
    assert (messages[5].reply_to_id, messages[6].reply_to_id, messages[6].topic_id) == (None, 5, None)

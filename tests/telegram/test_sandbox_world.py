"""Loading sandbox worlds: documents with real, deterministic bytes; archives; volume sets; bad files."""

import hashlib
import io
import json
import zipfile

import py7zr
import pytest
from django.core.management import call_command

from telegram.records import GENERAL_TOPIC_ID, ChatRef
from telegram.sandbox.content import seeded_read
from telegram.sandbox.loader import world_load
from telegram.sandbox.world import World, WorldError, chat_access_hash

READER = "+15550000001"


def dump(chat_id: int) -> dict:
    out = io.StringIO()
    call_command("sandbox_dump", str(chat_id), "--json", stdout=out)
    return json.loads(out.getvalue())


def test_design_example_loads_and_dumps_every_message(sandbox, design_world):
    sandbox(design_world)

    result = dump(1001)

    assert result["chat"] == {"id": 1001, "title": "Models A", "type": "channel", "forum": False}
    assert [message["id"] for message in result["messages"]] == [10, 11, 12, 20, 21, 22, 30]
    first = result["messages"][0]
    assert first == {
        "id": 10,
        "topic": None,
        "sender": None,
        "date": "2024-01-01T00:00:10.000Z",
        "text": "hello",
        "entities": [],
        "grouped_id": None,
        "silent": False,
        "link_preview": True,
        "pinned": False,
        "edit_date": None,
        "random_id": None,
        "document": None,
        "photo": None,
    }
    assert result["deleted"] == []
    assert result["messages"][-1]["text"] == "dragon preview"
    assert result["messages"][-1]["photo"]["size"] > 0


def test_volume_set_is_consecutive_messages_that_join_into_a_valid_7z(sandbox, design_world):
    world = sandbox(design_world)

    volumes = [message for message in dump(1001)["messages"] if message["id"] in (20, 21, 22)]

    assert [volume["document"]["name"] for volume in volumes] == ["big.7z.001", "big.7z.002", "big.7z.003"]
    assert [volume["document"]["size"] for volume in volumes[:2]] == [1048576, 1048576]
    assert 0 < volumes[2]["document"]["size"] <= 1048576
    parts = [world.message_bytes(1001, volume["id"]) for volume in volumes]
    for volume, data in zip(volumes, parts, strict=True):
        assert len(data) == volume["document"]["size"]
        assert hashlib.sha256(data).hexdigest() == volume["document"]["sha256"]
    with py7zr.SevenZipFile(io.BytesIO(b"".join(parts))) as archive:
        assert [(entry.filename, entry.uncompressed) for entry in archive.list()] == [("a.stl", 3000000)]
        assert archive.testzip() is None


def test_zip_archive_is_a_valid_zip_with_the_listed_entries(sandbox, design_world):
    design_world["chats"][0]["messages"][1]["document"]["archive"].append({"path": "dragon/readme.txt", "size": 0})
    world = sandbox(design_world)

    with zipfile.ZipFile(io.BytesIO(world.message_bytes(1001, 11))) as archive:
        assert [(info.filename, info.file_size) for info in archive.infolist()] == [
            ("dragon/body.stl", 2000),
            ("dragon/readme.txt", 0),
        ]
        assert archive.testzip() is None
        assert archive.read("dragon/body.stl") == seeded_read(seed="dragon/body.stl", size=2000)


def test_documents_are_byte_identical_in_every_load(settings, tmp_path, design_world):
    world_load(tmp_path / "one", design_world)
    world_load(tmp_path / "two", design_world)
    one, two = World(tmp_path / "one"), World(tmp_path / "two")

    for message_id in (11, 12, 20, 21, 22, 30):
        assert one.message_bytes(1001, message_id) == two.message_bytes(1001, message_id)
    assert one.message_bytes(1001, 12) == seeded_read(seed=7, size=5000000)


def test_the_same_archive_in_two_chats_has_one_content(sandbox, design_world):
    repost = {**design_world["chats"][0], "id": 1002, "messages": [design_world["chats"][0]["messages"][1]]}
    design_world["chats"].append(repost)
    sandbox(design_world)

    original, copy = dump(1001)["messages"][1], dump(1002)["messages"][0]

    assert original["document"] == copy["document"]


def test_download_from_an_offset_returns_the_right_bytes(sandbox, sandbox_run, design_world):
    world = sandbox(design_world)
    ref = ChatRef(id=1001, access_hash=chat_access_hash(phone=READER, chat_id=1001, type="channel"))

    async def download_from(gateway, offset):
        [message] = (await gateway.get_messages(ref, [12])).values()
        return [chunk async for chunk in gateway.iter_download(ref, message.document, offset=offset)]

    chunks = sandbox_run(world, READER, lambda gateway: download_from(gateway, 1_000_003))

    # Requests start on part boundaries: the first chunk is the rest of the part the offset falls in.
    assert [len(chunk) for chunk in chunks[:2]] == [2 * 512 * 1024 - 1_000_003, 512 * 1024]
    assert b"".join(chunks) == seeded_read(seed=7, size=5000000)[1_000_003:]


def test_unknown_keys_are_ignored_and_roles_kept(sandbox, design_world):
    design_world["future"] = {"anything": True}
    design_world["accounts"][0]["avatar"] = "dragon.png"
    design_world["chats"][0] |= {"role": "source", "pinned": 10}
    design_world["chats"][0]["messages"][0]["reactions"] = ["👍"]

    world = sandbox(design_world)

    assert world.chats()[0]["role"] == "source"
    assert world.chats()[0]["members"] == [READER]


def test_a_forum_files_messages_without_a_topic_under_general(sandbox, design_world):
    design_world["chats"][0]["forum"] = True

    sandbox(design_world)

    topics = {message["id"]: message["topic"] for message in dump(1001)["messages"]}
    assert topics[10] == GENERAL_TOPIC_ID
    assert topics[11] == 42


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda world: world["chats"][0].update(type="megagroup"), "'type' must be one of"),
        (lambda world: world["chats"][0]["members"].append("+15559999999"), "is not one of the world's accounts"),
        (lambda world: world["chats"][0]["messages"].append({"id": 21, "text": "x"}), "used twice"),
        (
            lambda world: world["chats"][0]["messages"].append(
                {"id": 40, "document": {"name": "a.rar", "archive": [{"path": "a", "size": 1}]}}
            ),
            "must end in .zip or .7z",
        ),
        (lambda world: world["chats"][0]["messages"].append({"id": 41, "document": {"name": "x"}}), "'size'"),
        (lambda world: world["faults"].append({"op": "upload", "error": "meteor"}), "fault error 'meteor'"),
        (lambda world: world["accounts"].append({"phone": "5550000002"}), "international format"),
    ],
)
def test_an_invalid_world_says_why_and_keeps_the_loaded_one(settings, sandbox, design_world, change, reason):
    sandbox(design_world)
    broken = json.loads(json.dumps(design_world))
    change(broken)

    with pytest.raises(WorldError, match=reason):
        world_load(settings.SANDBOX_PATH, broken)

    assert [message["id"] for message in dump(1001)["messages"]][:2] == [10, 11]
    assert len(World(settings.SANDBOX_PATH).message_bytes(1001, 20)) == 1048576

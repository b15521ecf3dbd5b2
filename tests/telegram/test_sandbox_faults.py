"""Sandbox faults: matching, times/after, the Telegram errors they answer (as the gateway maps them),
counters shared by processes."""

import itertools
import subprocess
import sys
import textwrap

import pytest
from django.conf import settings

from telegram.errors import (
    AccountRestricted,
    FileReferenceExpired,
    FloodWait,
    TargetForbidden,
    TelegramError,
    TransientError,
)
from telegram.records import ChatRef
from telegram.sandbox.faults import SandboxCrash
from telegram.sandbox.world import chat_access_hash
from tests.support.sandbox import ref as chat_ref

READER, OTHER = "+15550000001", "+15550000002"
RANDOM_IDS = itertools.count(1)


def world_with(faults: list[dict]) -> dict:
    return {
        "accounts": [{"phone": READER}, {"phone": OTHER}],
        "chats": [
            {
                "id": chat_id,
                "type": "supergroup",
                "members": [READER, OTHER],
                "messages": [
                    {"id": 11, "document": {"name": "a.zip", "archive": [{"path": "a.stl", "size": 100}]}},
                    {"id": 12, "document": {"name": "b.bin", "size": 100}},
                ],
            }
            for chat_id in (1, 2)
        ],
        "faults": faults,
    }


def ref(phone: str, chat_id: int) -> ChatRef:
    return chat_ref(phone, chat_id, "supergroup")


def send(sandbox_run, world, phone=READER, chat_id=1):
    random_id = next(RANDOM_IDS)
    return sandbox_run(world, phone, lambda g: g.send_message(ref(phone, chat_id), random_id=random_id, text="hi"))


def download(sandbox_run, world, message_id: int, phone=READER, chat_id=1) -> bytes:
    async def action(gateway):
        message = (await gateway.get_messages(ref(phone, chat_id), [message_id]))[message_id]
        return b"".join([chunk async for chunk in gateway.iter_download(ref(phone, chat_id), message.document)])

    return sandbox_run(world, phone, action)


def test_after_lets_calls_through_then_times_fail(sandbox, sandbox_run):
    world = sandbox(world_with([{"op": "send", "error": "flood_wait", "seconds": 9, "after": 1, "times": 2}]))

    send(sandbox_run, world)
    for _ in range(2):
        with pytest.raises(FloodWait) as wait:
            send(sandbox_run, world)
        assert (wait.value.seconds, wait.value.rpc) == (9, "FLOOD_WAIT")
    send(sandbox_run, world)

    assert world.stats()["calls"][READER]["messages.sendMessage"] == 4


def test_faults_narrow_to_account_chat_and_message(sandbox, sandbox_run):
    world = sandbox(world_with([{"op": "download", "account": READER, "chat": 1, "message": 11, "error": "network"}]))

    download(sandbox_run, world, 12)
    download(sandbox_run, world, 11, chat_id=2)
    download(sandbox_run, world, 11, phone=OTHER)
    with pytest.raises(TransientError):
        download(sandbox_run, world, 11)
    download(sandbox_run, world, 11)  # times defaults to 1


def test_history_covers_every_read_of_messages(sandbox, sandbox_run):
    world = sandbox(world_with([{"op": "history", "chat": 1, "error": "flood_wait", "times": 4}]))
    chat = ref(READER, 1)

    for action in (
        lambda gateway: gateway.search_documents(chat, min_id=0),
        lambda gateway: gateway.get_messages(chat, [11]),
        lambda gateway: gateway.list_topics(chat),
        lambda gateway: gateway.get_last_message_ids([ref(READER, 2), chat]),
    ):
        with pytest.raises(FloodWait):
            sandbox_run(world, READER, action)
    send(sandbox_run, world)  # sending is not history
    assert sandbox_run(world, READER, lambda gateway: gateway.search_documents(chat, min_id=0))


def test_any_covers_uploads_and_login_is_never_faulted(sandbox, sandbox_run, tmp_path):
    world = sandbox(world_with([{"op": "any", "account": READER, "error": "peer_flood", "times": 2}]))
    path = tmp_path / "a.jpg"
    path.write_bytes(b"jpg")

    with pytest.raises(AccountRestricted):
        sandbox_run(world, READER, lambda g: g.upload_media(path=str(path), file_name="a.jpg", mime_type="image/jpeg"))
    sandbox_run(world, READER, lambda gateway: gateway.send_code(), session="")
    with pytest.raises(AccountRestricted):
        sandbox_run(world, READER, lambda gateway: gateway.get_me())


@pytest.mark.parametrize(
    ("error", "raised", "rpc"),
    [
        ("flood_wait", FloodWait, "FLOOD_WAIT"),
        ("file_reference_expired", FileReferenceExpired, "FILE_REFERENCE_EXPIRED"),
        ("network", TransientError, "ConnectionError"),  # the connection drops: no answer at all
        ("peer_flood", AccountRestricted, "PEER_FLOOD"),
        ("write_forbidden", TargetForbidden, "CHAT_WRITE_FORBIDDEN"),
    ],
)
def test_fault_errors_are_the_gateway_taxonomy(sandbox, sandbox_run, error, raised, rpc):
    world = sandbox(world_with([{"op": "send", "error": error}]))

    with pytest.raises(raised) as caught:
        send(sandbox_run, world)

    assert caught.value.rpc == rpc


def test_a_crash_passes_through_ordinary_error_handlers(sandbox, sandbox_run):
    world = sandbox(world_with([]))
    world.fault_add({"op": "download", "message": 12, "error": "crash", "after": 0})

    def tolerant_download():
        try:
            download(sandbox_run, world, 12)
        except Exception:  # what a worker's error handling would catch
            return "handled"
        return "done"

    assert issubclass(SandboxCrash, BaseException)
    assert not issubclass(SandboxCrash, Exception | TelegramError)
    with pytest.raises(SandboxCrash):
        tolerant_download()
    assert tolerant_download() == "done"


SUBPROCESS = textwrap.dedent(
    """
    import asyncio, sys
    from functools import partial
    from telegram.records import ChatRef
    from telegram.sandbox.sender import SandboxClient
    from telegram.telethon.gateway import TelethonGateway

    path, phone, session, access_hash = sys.argv[1:5]

    async def main():
        client_factory = partial(SandboxClient, world_path=path, phone=phone)
        async with TelethonGateway(phone, session, 1, "sandbox", client_factory=client_factory) as gateway:
            try:
                chat = ChatRef(id=1, access_hash=int(access_hash), type="supergroup")
                await gateway.send_message(chat, random_id=424242, text="hi")
            except Exception as exc:
                print(type(exc).__name__)
            else:
                print("sent")

    asyncio.run(main())
    """
)


def run_in_another_process(world, session: str) -> subprocess.CompletedProcess:
    access_hash = chat_access_hash(phone=READER, chat_id=1, type="supergroup")
    return subprocess.run(
        [sys.executable, "-c", SUBPROCESS, str(world.path), READER, session, str(access_hash)],
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.processes
def test_fault_counters_and_request_counts_are_shared_across_processes(sandbox, sandbox_run):
    world = sandbox(world_with([{"op": "send", "error": "flood_wait", "times": 2}, {"op": "send", "error": "crash"}]))
    session = world.session_issue(READER)

    with pytest.raises(FloodWait):
        send(sandbox_run, world)
    assert run_in_another_process(world, session).stdout.strip() == "FloodWait"
    crashed = run_in_another_process(world, session)
    assert crashed.returncode != 0 and "SandboxCrash" in crashed.stderr
    assert run_in_another_process(world, session).stdout.strip() == "sent"

    assert world.stats()["calls"][READER]["messages.sendMessage"] == 4
    assert [message["sender"] for message in world.chat_dump(1)["messages"] if message["text"] == "hi"] == [READER]

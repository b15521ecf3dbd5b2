"""The sandbox server under the one gateway: what connecting costs, sessions used from two processes
(AUTH_KEY_DUPLICATED), the network's round trip and rate, FLOOD_WAIT on connect, requests it does not know."""

import asyncio
import inspect
import os
import subprocess
import sys
import textwrap
import time

import pytest
from django.conf import settings
from telethon import functions, types

from telegram.errors import AuthRequired, FloodWait, TransientError
from telegram.gateway import TelegramGateway, open_gateway
from telegram.sandbox.faults import RpcAnswer
from telegram.sandbox.sender import SandboxClient, serialize
from telegram.sandbox.server import SandboxServer, method_name, unwrap
from telegram.telethon.gateway import TelethonGateway
from tests.support.sandbox import ref

READER = "+15550000001"
PROTOCOL_METHODS = [
    name for name, member in vars(TelegramGateway).items() if inspect.isfunction(member) and not name.startswith("_")
]


async def nothing(gateway):
    return None


@pytest.mark.parametrize("name", PROTOCOL_METHODS)
def test_the_gateway_has_every_protocol_method_with_the_same_parameters(name):
    expected = inspect.signature(getattr(TelegramGateway, name)).parameters
    actual = inspect.signature(getattr(TelethonGateway, name)).parameters

    assert [(p.name, p.kind, p.default) for p in actual.values()] == [
        (p.name, p.kind, p.default) for p in expected.values()
    ]


@pytest.mark.django_db
def test_open_gateway_on_the_sandbox_is_the_telethon_gateway_on_a_sandbox_client(settings, tmp_path):
    settings.TELEGRAM_BACKEND = "sandbox"
    settings.SANDBOX_PATH = tmp_path / "nothing-loaded"

    gateway = open_gateway(phone=READER)

    assert isinstance(gateway, TelethonGateway)

    async def enter():
        async with gateway:
            pass

    with pytest.raises(TransientError, match="sandbox_load"):  # no world: as if Telegram could not be reached
        asyncio.run(enter())
    assert isinstance(gateway._client, SandboxClient)


@pytest.mark.parametrize(
    ("request_", "name"),
    [
        (functions.messages.SearchRequest, "messages.search"),
        (functions.upload.GetFileRequest, "upload.getFile"),
        (functions.upload.SaveFilePartRequest, "upload.saveFilePart"),
        (functions.messages.SendMediaRequest, "messages.sendMedia"),
        (functions.help.GetConfigRequest, "help.getConfig"),
        (functions.users.GetUsersRequest, "users.getUsers"),
        (functions.InvokeWithLayerRequest, "invokeWithLayer"),
    ],
)
def test_requests_are_counted_by_telegrams_method_names(request_, name):
    assert method_name(request_.__new__(request_)) == name


def test_wrappers_are_answered_as_the_request_inside():
    inner = functions.help.GetConfigRequest()
    wrapped = functions.InvokeWithLayerRequest(
        1,
        functions.InitConnectionRequest(1, "d", "s", "a", "l", "p", "l", functions.InvokeWithoutUpdatesRequest(inner)),
    )

    assert unwrap(wrapped) is inner


def test_answers_serialize_as_telegram_sends_them():
    assert serialize(True) == bytes.fromhex("b5757299")
    assert serialize([]) == bytes.fromhex("15c4b51c00000000")
    user = types.UserEmpty(id=5)
    assert serialize([user]) == bytes.fromhex("15c4b51c01000000") + bytes(user)


def test_a_request_the_sandbox_does_not_know_is_refused_by_name(sandbox):
    world = sandbox({"accounts": [{"phone": READER}]})
    server = SandboxServer(world)

    with pytest.raises(RpcAnswer) as refused:
        server.answer(functions.contacts.GetContactsRequest(hash=0), key_id="1", dc_id=2, phone=READER)

    assert (refused.value.code, refused.value.message) == (400, "METHOD_NOT_SUPPORTED_BY_SANDBOX")
    assert world.stats()["calls"][READER] == {"contacts.getContacts": 1}


def test_connecting_costs_a_config_and_a_who_am_i(sandbox, sandbox_run):
    world = sandbox({"accounts": [{"phone": READER}]})

    sandbox_run(world, READER, nothing)
    sandbox_run(world, READER, nothing)

    stats = world.stats()
    assert stats["connecting"] == {READER: {"help.getConfig": 2, "users.getUsers": 2}}
    assert stats["calls"] == stats["connecting"]
    assert stats["sessions"] == {READER: {"duplicated": 0, "max_processes": 1}}


def test_flood_wait_on_connect_surfaces_from_entering_the_gateway(sandbox, sandbox_run):
    world = sandbox(
        {"accounts": [{"phone": READER}], "faults": [{"op": "connect", "error": "flood_wait", "seconds": 7}]}
    )

    with pytest.raises(FloodWait) as wait:
        sandbox_run(world, READER, nothing)

    assert (wait.value.seconds, wait.value.rpc) == (7, "FLOOD_WAIT")
    assert world.stats()["flood_waits"] == {READER: 1}
    assert sandbox_run(world, READER, lambda gateway: gateway.get_me()).phone == READER  # times: 1


def test_every_request_takes_the_round_trip(sandbox, sandbox_run):
    world = sandbox(
        {
            "accounts": [{"phone": READER}],
            "network": {"rtt_ms": 200},
            "chats": [{"id": 7, "members": [READER], "messages": [{"id": 1, "text": "x"}]}],
        }
    )

    async def timed_search(gateway):
        started = time.monotonic()
        await gateway.search_documents(ref(READER, 7), min_id=0)
        return time.monotonic() - started

    assert 0.2 <= sandbox_run(world, READER, timed_search) < 1


def test_file_bytes_pass_the_connection_at_its_rate(sandbox, sandbox_run, settings):
    settings.TRANSFER_PARTS_IN_FLIGHT = 1  # one part at a time: one connection
    world = sandbox(
        {
            "accounts": [{"phone": READER}],
            "network": {"connection_bytes_per_s": 2_000_000},
            "chats": [
                {
                    "id": 7,
                    "members": [READER],
                    "messages": [{"id": 1, "document": {"name": "a.bin", "size": 1_048_576}}],
                }
            ],
        }
    )

    async def timed_download(gateway):
        message = (await gateway.get_messages(ref(READER, 7), [1]))[1]
        started = time.monotonic()
        data = b"".join([chunk async for chunk in gateway.iter_download(ref(READER, 7), message.document)])
        return len(data), time.monotonic() - started

    size, elapsed = sandbox_run(world, READER, timed_download)

    assert size == 1_048_576
    assert 0.5 <= elapsed < 3


# One session connected from two OS processes at once.

HOLDER = textwrap.dedent(
    """
    import asyncio, os, sys, time
    from functools import partial
    from telegram.sandbox.sender import SandboxClient
    from telegram.telethon.gateway import TelethonGateway

    path, phone, session, barrier, name = sys.argv[1:6]

    async def both_connected():
        open(os.path.join(barrier, name), "w").close()
        deadline = time.monotonic() + 30
        while len(os.listdir(barrier)) < 2 and time.monotonic() < deadline:
            await asyncio.sleep(0.02)

    async def main():
        client_factory = partial(SandboxClient, world_path=path, phone=phone)
        try:
            # Telegram may kill the key while this process connects (the other one got there first).
            async with TelethonGateway(phone, session, 1, "sandbox", client_factory=client_factory) as gateway:
                await both_connected()
                await gateway.get_me()
        except Exception as exc:
            print(type(exc).__name__)
            open(os.path.join(barrier, name), "w").close()
        else:
            print("ok")

    asyncio.run(main())
    """
)


def connect_twice_at_once(world, session: str, barrier) -> list[str]:
    barrier.mkdir()
    holders = [
        subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(world.path), READER, session, str(barrier), name],
            cwd=settings.BASE_DIR,
            env=os.environ.copy(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("one", "two")
    ]
    outputs = [holder.communicate(timeout=60) for holder in holders]
    assert [holder.returncode for holder in holders] == [0, 0], [err for _, err in outputs]
    return [out.strip() for out, _ in outputs]


@pytest.mark.processes
def test_one_session_in_two_processes_is_duplicated_and_revoked(sandbox, sandbox_run, tmp_path):
    world = sandbox({"accounts": [{"phone": READER}], "quirks": {"auth_key_duplicated": True}})
    session = world.session_issue(READER)

    assert connect_twice_at_once(world, session, tmp_path / "barrier") == ["AuthRequired", "AuthRequired"]

    sessions = world.stats()["sessions"][READER]
    assert sessions["duplicated"] >= 1 and sessions["max_processes"] == 2
    with pytest.raises(AuthRequired) as revoked:  # for good: the operator must log in again
        sandbox_run(world, READER, lambda gateway: gateway.get_me(), session=session)
    assert revoked.value.rpc == "AUTH_KEY_DUPLICATED"
    assert sandbox_run(world, READER, lambda gateway: gateway.get_me()).phone == READER  # a new session works


@pytest.mark.processes
def test_without_the_quirk_a_shared_session_is_only_counted(sandbox, sandbox_run, tmp_path):
    world = sandbox({"accounts": [{"phone": READER}]})
    session = world.session_issue(READER)

    assert connect_twice_at_once(world, session, tmp_path / "barrier") == ["ok", "ok"]

    sessions = world.stats()["sessions"][READER]
    assert sessions["duplicated"] >= 1 and sessions["max_processes"] == 2
    assert sandbox_run(world, READER, lambda gateway: gateway.get_me(), session=session).phone == READER


def test_one_process_reconnecting_a_session_is_not_a_duplicate(sandbox, sandbox_run):
    world = sandbox({"accounts": [{"phone": READER}], "quirks": {"auth_key_duplicated": True}})
    session = world.session_issue(READER)

    for _ in range(3):
        sandbox_run(world, READER, lambda gateway: gateway.get_me(), session=session)

    assert world.stats()["sessions"][READER] == {"duplicated": 0, "max_processes": 1}


def test_export_session_gives_the_session_to_store_and_an_unreadable_one_asks_for_a_login(sandbox, sandbox_run):
    world = sandbox({"accounts": [{"phone": READER}]})
    session = world.session_issue(READER)

    assert open_gateway(phone=READER, session=session).export_session() == session
    assert sandbox_run(world, READER, lambda gateway: nothing(gateway), session=session) is None
    with pytest.raises(AuthRequired, match="cannot be read"):
        sandbox_run(world, READER, nothing, session="not a session")


@pytest.mark.django_db
def test_a_session_keeps_its_key_and_data_centre_across_connections(sandbox):
    world = sandbox({"accounts": [{"phone": READER, "dc": 3}]})
    session = world.session_issue(READER)

    async def exported():
        async with open_gateway(phone=READER, session=session) as gateway:
            await gateway.get_me()
        return gateway.export_session()

    assert asyncio.run(exported()) == session

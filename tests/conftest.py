import asyncio
import copy
import gc
import os
import subprocess

import pytest

# Fixtures that take the whole test stack away from every other test process: tests using them run alone.
ALONE_FIXTURES = {"postgres_restart"}


# Test modules whose every test is marked `large` and which take seconds to collect (the API fuzz tests are made
# from the OpenAPI schema, on every test process): when the -m expression leaves `large` out (`make test-fast`),
# they are not collected at all.
LARGE_MODULES = {"test_api_fuzz.py"}


def pytest_ignore_collect(collection_path, config):
    if collection_path.name not in LARGE_MODULES or not config.option.markexpr:
        return None
    from _pytest.mark.expression import Expression

    wanted = Expression.compile(config.option.markexpr).evaluate(lambda name, /, **kwargs: name == "large")
    return None if wanted else True


def pytest_addoption(parser):
    parser.addoption(
        "--tests-alone",
        choices=("with-others", "skip", "only"),
        default="with-others",
        help="`make test` runs the tests that must run alone (marked `alone`) after the others: skip, then only.",
    )


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """Tell each test process how the tests are handed out (its own options say "no distribution")."""
    node.workerinput["dist"] = node.config.getoption("dist")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if ALONE_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.alone)
    choice = config.getoption("--tests-alone")
    if choice != "with-others":
        wanted = choice == "only"
        config.hook.pytest_deselected(
            items=[item for item in items if bool(item.get_closest_marker("alone")) != wanted]
        )
        items[:] = [item for item in items if bool(item.get_closest_marker("alone")) == wanted]
    if getattr(config, "workerinput", {}).get("dist") == "worksteal":
        from tests.support.order import durations_known, long_first, seconds_guessed

        known = durations_known()
        seconds = {
            item.nodeid: seconds_guessed(item.nodeid, {mark.name for mark in item.iter_markers()}, known)
            for item in items
        }
        workers = int(config.workerinput["workercount"])
        items[:] = long_first(items, workers, seconds=lambda item: seconds[item.nodeid])


def pytest_collection_finish(session):
    """What collection imported (Django, the apps, the test modules: half a million objects) lives to the end.
    Frozen, it is out of the garbage collector's sight: every full collection during the run walked it again.
    Collections are rarer too: a test process lives minutes, its garbage is small, and the collector's CPU is
    the other tests' CPU."""
    gc.freeze()
    gc.set_threshold(10_000, 20, 100)


@pytest.fixture
def storage(settings, tmp_path):
    """Kept files (MEDIA_ROOT) and staged downloads in this test's own folder."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.INGEST_STAGING_DIR = tmp_path / "staging"


@pytest.fixture
def api(admin_user):
    """An API client signed in as an operator with every permission."""
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(admin_user)
    return client


@pytest.fixture
def sandbox(settings, tmp_path):
    """Load a sandbox world (DESIGN.md world format v1) into a fresh folder.

    Usage: world = sandbox({"accounts": [...], "chats": [...]}).
    """
    from telegram.sandbox.loader import world_load
    from telegram.sandbox.world import World

    settings.SANDBOX_PATH = tmp_path / "sandbox"

    def load(data: dict) -> World:
        world_load(settings.SANDBOX_PATH, data)
        return World(settings.SANDBOX_PATH)

    return load


# The example world of DESIGN.md, "Sandbox world file (JSON, v1)", verbatim.
DESIGN_WORLD = {
    "limits": {"upload_max_bytes": 2097152000, "premium_upload_max_bytes": 4194304000},
    "accounts": [
        {
            "phone": "+15550000001",
            "first_name": "Reader A",
            "premium": False,
            "code": "12345",
            "password": None,
            "bandwidth_bytes_per_s": None,
        }
    ],
    "chats": [
        {
            "id": 1001,
            "title": "Models A",
            "type": "channel",
            "forum": False,
            "members": ["+15550000001"],
            "admins": [],
            "slow_mode_seconds": 0,
            "topics": [{"id": 1, "title": "General"}, {"id": 42, "title": "Dragons"}],
            "messages": [
                {"id": 10, "text": "hello"},
                {
                    "id": 11,
                    "topic": 42,
                    "document": {"name": "dragon.zip", "archive": [{"path": "dragon/body.stl", "size": 2000}]},
                },
                {"id": 12, "document": {"name": "noise.bin", "size": 5000000, "seed": 7}},
                {
                    "id": 20,
                    "document": {
                        "name": "big.7z",
                        "archive": [{"path": "a.stl", "size": 3000000}],
                        "volume_size": 1048576,
                    },
                },
                {"id": 30, "photo": {"caption": "dragon preview"}},
            ],
        }
    ],
    "faults": [{"op": "download", "chat": 1001, "message": 11, "error": "flood_wait", "seconds": 1, "times": 1}],
}


@pytest.fixture
def design_world() -> dict:
    """A fresh copy of DESIGN.md's example world, to load with the `sandbox` fixture."""
    return copy.deepcopy(DESIGN_WORLD)


@pytest.fixture
def sandbox_run(db):
    """Run `action(gateway)` on the Telethon gateway of `phone`, connected to the sandbox server of
    `world`, in its own event loop; returns its result. Opening it takes the account's session lease, which
    writes its holder in the test database.

    Usage: sandbox_run(world, "+15550000001", lambda gateway: gateway.get_me()). The gateway is
    logged in (a fresh session from the world) unless `session` is given.
    """
    from telegram.gateway import open_gateway

    def run(world, phone: str, action, *, session: str | None = None):
        async def main():
            session_ = world.session_issue(phone) if session is None else session
            async with open_gateway(phone=phone, session=session_) as gateway:
                return await action(gateway)

        return asyncio.run(main())

    return run


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Rate limits (the API token throttle) count in the cache: every test starts with nothing counted."""
    from django.core.cache import cache

    cache.clear()


@pytest.fixture
def ingest_world(sandbox):
    """Load a world into this test's sandbox folder, log its accounts in and apply the chat roles:
    `sandbox_load --authorize`."""
    from tests.support.ingestion import world_authorize_load

    return world_authorize_load


@pytest.fixture
def object_store(settings):
    """Keep media and raw files in a fresh bucket of the S3-protocol server `make test` starts (moto's
    server mode, config/devstack.py); returns the STORAGE_URL naming it, for worker processes."""
    import os
    import socket
    import time
    import uuid
    from urllib.parse import urlsplit

    from config.storage import default_storage_for, object_store_parse

    endpoint = os.environ.get("TEST_S3_ENDPOINT")
    if not endpoint:
        pytest.fail("TEST_S3_ENDPOINT is not set: run the tests through `make test`, which starts the S3 server.")
    address = urlsplit(endpoint)
    deadline = time.monotonic() + 30
    while socket.socket().connect_ex((address.hostname, address.port)) != 0:
        if time.monotonic() > deadline:
            pytest.fail(f"The test S3 server at {endpoint} did not start; see var/test-s3.log.")
        time.sleep(0.1)
    url = f"s3+http://stashcast:stashcast-secret@{address.netloc}/test-{uuid.uuid4().hex[:12]}?region=us-east-1"
    object_store_parse(url).client().create_bucket(Bucket=object_store_parse(url).bucket)
    settings.STORAGE_URL = url
    settings.STORAGES = {**settings.STORAGES, "default": default_storage_for(url)}
    return url


@pytest.fixture
def postgres_restart():
    """Restart the test stack's embedded PostgreSQL at once, as a crash would (`pg_ctl restart -m immediate`):
    every connection goes, and every advisory lock and lease with it. Tests using it need transaction=True."""
    from django.db import connection

    from config.devstack import PG_OS_USER, Stack, _pg_bin

    data = Stack.from_env().var / "postgres"
    if not (data / "postmaster.pid").exists():
        pytest.skip("needs the embedded PostgreSQL of `config.devstack test`")

    def restart() -> None:
        subprocess.run(
            [str(_pg_bin() / "pg_ctl"), "-D", str(data), "-l", str(data.parent / "postgres.log")]
            + ["-m", "immediate", "-w", "-t", "60", "restart"],
            user=PG_OS_USER if os.geteuid() == 0 else None,
            check=True,
            capture_output=True,
        )

    yield restart
    if connection.connection is not None and not connection.is_usable():
        connection.close()


# The reminders' fixtures, used by the reminders, operations and browser tests.
@pytest.fixture
def fast_pace(settings, tmp_path):
    """A time-scaled budget: the rules are the same, the minute is shorter."""
    settings.REMINDER_MAX_SEND_PER_MINUTE = 6000
    settings.REMINDER_SEND_BURST = 3
    settings.REMINDER_PART_JITTER_MIN_MS = 0
    settings.REMINDER_PART_JITTER_MAX_MS = 2
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def fresh_buckets():
    """Accounts get new ids in every test, but a bucket left by an earlier run of the suite may share one.
    The test process has a Redis database of its own (config/settings/test.py): only its buckets go."""
    from tests.support.buckets import send_buckets_flush

    send_buckets_flush()


@pytest.fixture
def fanout_world(ingest_world):
    """The reminders tests' name for `ingest_world`: load a world, log its accounts in."""
    return ingest_world


@pytest.fixture
def operator(client, django_user_model):
    """The test client, logged in as a member of the Operators group."""
    from django.contrib.auth.models import Group

    from core.roles import OPERATORS_GROUP

    user = django_user_model.objects.create_user(username="operator", password="s3cret-pass")
    user.groups.add(Group.objects.get_or_create(name=OPERATORS_GROUP)[0])
    client.force_login(user)
    return client


@pytest.fixture
def at(monkeypatch):
    """Set the project's clock: at(datetime) fixes it; at(first, then=..., after=n) switches after n readings."""
    import itertools

    from core import clock

    def set_clock(moment, *, then=None, after: int = 0):
        readings = itertools.count()
        monkeypatch.setattr(clock, "now", lambda: moment if then is None or next(readings) < after else then)

    return set_clock


@pytest.fixture
def enqueued(monkeypatch) -> list[int]:
    """Runs the services queue (resume, fire, the pages, beat); the test runs them itself (or not) instead of a
    Celery worker."""
    from reminders.services import runs as run_services

    queued = []
    monkeypatch.setattr(run_services, "reminder_run_enqueue", queued.append)
    return queued


@pytest.fixture(scope="module")
def built(request, django_db_setup, django_db_blocker, tmp_path_factory):
    """What the test module's `build_once()` made (an ingested world), built once for all its tests; see
    tests/support/once.py."""
    from tests.support.once import built_once

    yield from built_once(
        blocker=django_db_blocker, folder=tmp_path_factory.mktemp("built"), build=request.module.build_once
    )


@pytest.fixture
def built_copy(built, db, settings, tmp_path):
    """What the module's `build_once()` returned, with this test on its own copy of the built files."""
    from tests.support.once import built_copy_use

    built_copy_use(built, target=tmp_path / "built", settings=settings)
    return built.value

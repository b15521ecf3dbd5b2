"""Package sends when the ground moves: PostgreSQL restarts, Redis forgets, the account rests meanwhile."""

import threading
import time

import pytest
from django.db import connection

from accounts import pace
from accounts.models import Chat, TelegramAccount
from core.models import RunStatus
from packages import sending
from packages.models import Package, PackageSend, PackageSendPart
from telegram.sandbox.world import World
from tests.support.buckets import send_buckets_flush
from tests.support.ingestion import WRITER, run_cycle, world

FRIENDS = 5000
PARTS = 6
MESSAGES = [{"id": 30, "document": {"name": "huge.zip", "size": PARTS * 100_000, "seed": 5}}]
FRIENDS_CHAT = {"id": FRIENDS, "title": "Friends", "type": "supergroup", "members": [WRITER], "messages": []}

pytestmark = pytest.mark.usefixtures("storage", "fast_pace", "fresh_buckets")


@pytest.fixture
def huge(ingest_world):
    data = world(messages=MESSAGES, more_chats=[FRIENDS_CHAT], limits={"upload_max_bytes": 100_000})
    data["quirks"] = {"auth_key_duplicated": True}  # Telegram's rule: one session used twice at once is revoked
    loaded = ingest_world(data)
    assert run_cycle().ingested == 1
    return loaded


def _send() -> PackageSend:
    return sending.package_send_create(
        packages=[Package.objects.get(file_name="huge.zip")], chat=Chat.objects.get(telegram_id=FRIENDS)
    )


def _copies(loaded: World) -> list[str]:
    return [message["document"]["name"] for message in loaded.chat_dump(FRIENDS)["messages"] if message["document"]]


@pytest.mark.django_db(transaction=True)
def test_a_postgres_restart_stops_the_send_and_hands_it_back(huge, settings, postgres_restart):
    settings.WORK_HEARTBEAT_SECONDS = 1
    settings.REMINDER_MAX_SEND_PER_MINUTE = 60  # one part a second: the restart lands mid-send
    settings.REMINDER_SEND_BURST = 1
    send = _send()
    restarted = {}

    def restart_after_the_first_part():
        while not PackageSendPart.objects.filter(send=send, sent_at__isnull=False).exists():
            time.sleep(0.05)
        connection.close()
        postgres_restart()
        restarted["at"] = time.monotonic()
        restarted["copies"] = len(_copies(huge))

    restarter = threading.Thread(target=restart_after_the_first_part)
    restarter.start()
    ending = sending.package_send_execute(send_id=send.pk)
    stopped_at = time.monotonic()
    restarter.join()

    assert ending is None, "the send neither finished nor failed: it was handed back"
    assert stopped_at - restarted["at"] < 2 * settings.WORK_HEARTBEAT_SECONDS + 1, "noticed within a heartbeat"
    assert len(_copies(huge)) <= restarted["copies"] + 1, "nothing more after the loss but the part on the wire"
    send.refresh_from_db()
    assert send.status == RunStatus.QUEUED and send.worker_id == ""
    assert send.error.startswith("Interrupted:"), send.error

    assert sending.package_send_execute(send_id=send.pk) == RunStatus.SUCCESS
    assert sorted(_copies(huge)) == sorted(Package.objects.get(file_name="huge.zip").dest_part_names)
    assert huge.stats()["sessions"][WRITER]["duplicated"] == 0
    assert TelegramAccount.objects.get(phone=WRITER).auth_state == "authenticated"


@pytest.mark.django_db
def test_a_flushed_redis_does_not_forget_the_accounts_rest(huge):
    writer = TelegramAccount.objects.get(phone=WRITER)
    pace.account_rest(account=writer, reason="Telegram answered PEER_FLOOD")
    send_buckets_flush()  # Redis restarted without its data, or evicted the bucket
    send = _send()

    assert sending.package_send_execute(send_id=send.pk) == RunStatus.FAILED

    assert _copies(huge) == [], "nothing is sent while the account rests"
    send.refresh_from_db()
    assert "resting" in send.error


@pytest.mark.django_db
def test_a_flushed_redis_does_not_forget_a_flood_waits_hold(huge):
    writer = TelegramAccount.objects.get(phone=WRITER)
    reason = "Telegram asked to wait 30 s (FLOOD_WAIT_X)"
    pace.account_pace_lower(
        account=writer, bucket=pace.account_bucket(account=writer), kind="flood_wait", pause_seconds=30, reason=reason
    )
    send_buckets_flush()
    bucket = pace.account_bucket(account=writer)

    assert pace.account_send_check(account=writer, bucket=bucket) == ""
    assert bucket.state().wait > 25, "the next message waits for the rest of Telegram's wait"


@pytest.mark.django_db
def test_a_flushed_redis_does_not_forget_the_operators_stop(huge):
    writer = TelegramAccount.objects.get(phone=WRITER)
    pace.account_sending_set(account=writer, stopped=True)
    send_buckets_flush()
    send = _send()

    assert sending.package_send_execute(send_id=send.pk) == RunStatus.FAILED

    assert _copies(huge) == []
    send.refresh_from_db()
    assert "stopped" in send.error


@pytest.mark.django_db
def test_a_halted_bucket_ends_the_send_with_the_reason(huge):
    writer = TelegramAccount.objects.get(phone=WRITER)
    pace.account_bucket(account=writer).halt(until=time.time() + 3600)  # another process halted it
    send = _send()

    assert sending.package_send_execute(send_id=send.pk) == RunStatus.FAILED

    assert _copies(huge) == []
    send.refresh_from_db()
    assert send.status == RunStatus.FAILED and "send again" in send.error


@pytest.mark.django_db(transaction=True)
def test_a_long_flood_wait_does_not_get_a_live_send_reaped(huge, settings):
    from core.runs import runs_reap_stale

    settings.WORK_STALE_AFTER_SECONDS = 3
    settings.WORK_HEARTBEAT_SECONDS = 1
    huge.fault_add({"op": "send", "chat": FRIENDS, "error": "flood_wait", "seconds": 5, "after": 1})
    send = _send()
    done = threading.Event()
    reaped = []

    def reaper():  # beat's reaper, every half second instead of every minute
        while not done.is_set():
            reaped.extend(runs_reap_stale()["packages.PackageSend"].requeued)
            time.sleep(0.5)
        connection.close()

    watcher = threading.Thread(target=reaper)
    watcher.start()
    try:
        ending = sending.package_send_execute(send_id=send.pk)
    finally:
        done.set()
        watcher.join()

    assert reaped == [], "the heartbeat went on through Telegram's wait"
    assert ending == RunStatus.SUCCESS
    assert sorted(_copies(huge)) == sorted(Package.objects.get(file_name="huge.zip").dest_part_names)
    assert PackageSend.objects.get(pk=send.pk).requeue_count == 0

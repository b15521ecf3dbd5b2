"""One owner per Telegram session: an account that reads, writes and sends reminders at once, from several
processes, with Telegram killing any session used from two places at once."""

import json
import time

import pytest
from django.conf import settings

from accounts.models import TelegramAccount
from accounts.services import account_refresh_chats
from packages.models import Package
from reminders.services import reminder_fire
from telegram.sandbox.world import World
from tests.support.processes import start_program
from tests.support.reminders import make_reminder

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.processes]

BUSY = "+15550000007"  # reader, writer and reminder sender
SOURCE, DESTINATION = 1001, 9000
GROUPS = [5001 + n for n in range(6)]
SETS = 8


def busy_world() -> dict:
    archives = [
        {"id": 10 + n, "document": {"name": f"kit{n}.zip", "archive": [{"path": f"kit{n}/a.stl", "size": 150_000}]}}
        for n in range(SETS)
    ]
    return {
        # Telegram's own rule, switched on: a session connected from two processes at once is killed.
        "quirks": {"auth_key_duplicated": True},
        "network": {"rtt_ms": 20, "connection_bytes_per_s": 1_500_000},
        "accounts": [{"phone": BUSY, "first_name": "Busy", "code": "12345"}],
        "chats": [
            {
                "id": SOURCE,
                "title": "Kits",
                "type": "channel",
                "role": "source",
                "members": [BUSY],
                "messages": archives,
            },
            {"id": DESTINATION, "title": "Archive", "type": "channel", "role": "destination", "admins": [BUSY]},
            *({"id": group, "title": f"Group {group}", "type": "supergroup", "members": [BUSY]} for group in GROUPS),
        ],
    }


def test_reading_writing_sending_and_a_login_at_once_never_share_a_session(ingest_world, tmp_path):
    world = ingest_world(busy_world())
    run = reminder_fire(
        reminder=make_reminder(
            phone=BUSY, chats=list(TelegramAccount.objects.get(phone=BUSY).chats.filter(telegram_id__in=GROUPS))
        ),
        enqueue=False,
    )
    world.stats_reset()
    go = tmp_path / "go"
    sender = start_program(
        ["-m", "tests.reminders.fanout_worker", str(go), str(run.pk)], REMINDER_MAX_SEND_PER_MINUTE="600"
    )
    ingester = start_program(["manage.py", "ingest", "--once", "--account", BUSY], REMINDER_MAX_SEND_PER_MINUTE="600")
    time.sleep(3)  # the cycle is under way: the reminder run now wants the same session
    go.touch()
    account_refresh_chats(account=TelegramAccount.objects.get(phone=BUSY))  # and the operator refreshes chats

    sent, sent_err = sender.communicate(timeout=180)
    ingested, ingest_err = ingester.communicate(timeout=180)

    assert sender.returncode == 0, sent_err[-3000:]
    assert ingester.returncode == 0, ingest_err[-3000:]
    stats = World(settings.SANDBOX_PATH).stats()
    assert stats["sessions"][BUSY] == {"duplicated": 0, "max_processes": 1}, stats["sessions"]
    assert json.loads(sent.strip().splitlines()[-1]) == {str(run.pk): "success"}
    for group in GROUPS:
        assert [m["text"] for m in world.chat_dump(group)["messages"] if m["sender"] == BUSY] == ["Hello groups"]
    assert Package.objects.count() == SETS, ingested
    uploads = [m for m in world.chat_dump(DESTINATION)["messages"] if m["document"]]
    assert sorted(m["document"]["name"] for m in uploads) == sorted(f"kit{n}.zip" for n in range(SETS))
    reminded = max(m["date"] for group in GROUPS for m in world.chat_dump(group)["messages"])
    assert reminded < max(m["date"] for m in uploads), "the cycle handed the session over at a set boundary"
    assert TelegramAccount.objects.get(phone=BUSY).auth_state == "authenticated"

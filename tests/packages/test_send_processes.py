"""Sends in real OS processes: duplicate deliveries post each part once, and one account's sends share its pace."""

from datetime import datetime

import pytest

from accounts.models import Chat
from packages import sending
from packages.models import Package
from tests.support.ingestion import READER, WRITER, dump, run_cycle, world
from tests.support.processes import BURST, PER_MINUTE, assert_paced, race_in_processes

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.processes, pytest.mark.usefixtures("storage")]

CHATS = {5001: "Friends", 5002: "Club"}


def test_duplicate_deliveries_post_each_part_once_at_the_accounts_shared_pace(ingest_world, tmp_path):
    chats = [{"id": i, "title": t, "type": "supergroup", "members": [READER, WRITER]} for i, t in CHATS.items()]
    big = {"id": 30, "document": {"name": "huge.zip", "size": 550_000, "seed": 5}}
    ingest_world(world(messages=[big], more_chats=chats, limits={"upload_max_bytes": 100_000}))
    assert run_cycle().ingested == 1
    huge = Package.objects.get()
    assert len(huge.dest_message_ids) == 6
    one, two = (
        sending.package_send_create(packages=[huge], chat=Chat.objects.get(telegram_id=chat_id)) for chat_id in CHATS
    )

    # Each send delivered twice, to processes racing for it.
    reports = race_in_processes(tmp_path, "tests.packages.send_worker", [one.pk, two.pk], [one.pk], [two.pk])

    endings = [ending for report in reports for ending in report.values()]
    assert sorted(endings, key=str) == sorted(["success", "success", None, None], key=str)
    stamps = []
    for chat_id in CHATS:
        copies = [m for m in dump(chat_id)["messages"] if m["document"]]
        assert [m["document"]["name"] for m in copies] == huge.dest_part_names, "every part once, in order"
        stamps += [datetime.fromisoformat(m["date"]).timestamp() for m in copies]
    assert_paced(stamps, rate=PER_MINUTE / 60, capacity=BURST, slack=0.75)

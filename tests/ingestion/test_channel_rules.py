"""What each channel takes: kinds, extensions, names, sizes and the start point, on the sandbox server."""

import io
import json
from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.utils import timezone

from accounts.models import TelegramAccount
from ingestion.models import AccountChannelMap, Channel, ChannelScan, SkippedPackage, StartPoint
from ingestion.rules import Rules
from ingestion.services import (
    channel_history_count,
    channel_link_account,
    channel_rules_preview,
    channel_rules_update,
    channel_update,
    channels_for_known_chats,
)
from packages.models import Package
from telegram.sandbox.world import BASE_DATE
from tests.support.ingestion import ARCHIVES, READER, SOURCE, dump, run_cycle, uploaded_names, world

pytestmark = pytest.mark.django_db


def source() -> Channel:
    return Channel.objects.get(chat__telegram_id=SOURCE)


def watermark() -> int:
    return AccountChannelMap.objects.get(account__phone=READER, channel=source()).last_processed_message_id


def taken_with(ingest_world, **rules) -> list[str]:
    ingest_world(world(messages=ARCHIVES))
    channel_rules_update(channel=source(), **rules)
    run = run_cycle()
    assert run.skipped == 0 and not SkippedPackage.objects.exists(), run.error
    return sorted(Package.objects.values_list("file_name", flat=True))


def post_archive(name: str, size: int = 1500) -> int:
    out = io.StringIO()
    archive = {"name": name, "archive": [{"path": f"{name}/a.stl", "size": size}]}
    call_command("sandbox_post", str(SOURCE), "--archive-json", json.dumps(archive), stdout=out)
    return int(out.getvalue().split()[0])


def sizes() -> dict[str, int]:
    return {m["document"]["name"]: m["document"]["size"] for m in dump(SOURCE)["messages"] if m["document"]}


# Filters ------------------------------------------------------------------------------------------------------


def test_kinds_not_taken_are_counted_as_filtered_never_skipped(ingest_world):
    assert taken_with(ingest_world, take_kinds=["zip"]) == ["dragon.zip"]

    run = source().scans.get().run
    assert (run.ingested, run.filtered, run.skipped) == (1, 2, 0)
    assert ChannelScan.objects.get().filtered == 2
    assert watermark() == max(m["id"] for m in dump(SOURCE)["messages"])  # nothing left out holds it


def test_sets_of_several_volumes_can_be_left_out(ingest_world):
    assert taken_with(ingest_world, take_multi_volume=False) == ["bust.stl", "dragon.zip"]


def test_extensions_can_be_left_out(ingest_world):
    assert taken_with(ingest_world, leave_extensions=".STL, gcode") == ["big.7z.001", "dragon.zip"]


def test_a_name_pattern_takes_only_matching_sets(ingest_world):
    assert taken_with(ingest_world, name_pattern=r"^(drag|bust)") == ["bust.stl", "dragon.zip"]


def test_a_size_range_in_human_sizes_takes_only_sets_inside_it(ingest_world):
    ingest_world(world(messages=ARCHIVES))
    known = sizes()
    big = sum(size for name, size in known.items() if name.startswith("big.7z"))
    low, high = known["dragon.zip"] + 1, big  # dragon.zip below, big.7z at the top edge, bust.stl inside
    assert known["dragon.zip"] < known["bust.stl"] < big
    channel_rules_update(channel=source(), min_bytes=str(low), max_bytes=f"{high / 1000} kB")

    run = run_cycle()

    assert sorted(Package.objects.values_list("file_name", flat=True)) == ["big.7z.001", "bust.stl"]
    assert (run.filtered, run.skipped) == (1, 0)


def test_the_global_cap_still_holds_over_a_channel_range(ingest_world, settings):
    ingest_world(world(messages=ARCHIVES))
    settings.INGEST_MAX_PACKAGE_BYTES = 10**6

    with pytest.raises(ValidationError) as refused:
        channel_rules_update(channel=source(), max_bytes="2 MB")

    said = refused.value.message_dict["max_bytes"][0]
    assert said.startswith("At most 1 MB: ") and "INGEST_MAX_PACKAGE_BYTES" not in said and "bytes" not in said


# Start point --------------------------------------------------------------------------------------------------


def test_from_now_reads_no_history_and_takes_what_comes_next(ingest_world, settings):
    settings.INGEST_SKIP_RECENT_SCAN_WINDOW_SECONDS = 0  # the next cycle looks again at once
    world_ = ingest_world(world(messages=ARCHIVES))
    channel_rules_update(channel=source(), start_from=StartPoint.NOW)
    world_.stats_reset()

    run = run_cycle()

    assert (run.archives_found, run.ingested, run.bytes_downloaded) == (0, 0, 0)
    stats = world_.stats()
    asked = {
        method: count - stats["connecting"].get(READER, {}).get(method, 0)
        for method, count in stats["calls"][READER].items()
    }
    assert sum(asked.values()) <= 3, asked
    new_id = post_archive("fresh.zip")

    run = run_cycle()

    assert (run.ingested, uploaded_names()) == (1, ["fresh.zip"])
    assert watermark() == new_id


def test_a_new_channel_switched_on_starts_when_it_is_switched_on(ingest_world):
    other = {"id": 1003, "title": "Models C", "type": "channel", "members": [READER], "messages": ARCHIVES}
    ingest_world(world(messages=[], more_chats=[other]))
    channels_for_known_chats()  # what a chat refresh does: a row for the new chat, not switched on
    channel = Channel.objects.get(chat__telegram_id=1003)
    channel_link_account(channel=channel, account=TelegramAccount.objects.get(phone=READER))
    before = timezone.now()

    channel_update(channel=channel, is_active=True)

    channel.refresh_from_db()
    assert channel.start_from == StartPoint.NOW and channel.start_date >= before
    run = run_cycle()
    assert (run.archives_found, run.ingested, run.bytes_downloaded) == (0, 0, 0)
    assert run.scans.get(channel=channel).action == "scan"  # read, and its history was older than the start


def test_a_new_channel_starts_from_now_and_world_sources_from_their_history(ingest_world):
    ingest_world(world(messages=ARCHIVES))

    assert source().start_from == StartPoint.HISTORY
    assert Channel(chat=source().chat).start_from == StartPoint.NOW


@pytest.mark.parametrize(
    "link",
    ["https://t.me/c/1001/20", "t.me/c/1001/1/20", "https://t.me/models_a/20?single"],
    ids=["channel", "topic", "username"],
)
def test_from_a_message_link_takes_that_message_and_after(ingest_world, link):
    assert taken_with(ingest_world, start_from=StartPoint.MESSAGE, start_message_link=link) == [
        "big.7z.001",
        "bust.stl",
    ]
    assert source().start_message_id == 20


def test_from_a_date_takes_what_was_posted_since(ingest_world):
    since = BASE_DATE + timedelta(seconds=15)  # a world message is dated BASE_DATE + its id in seconds

    assert taken_with(ingest_world, start_from=StartPoint.DATE, start_date=since) == ["big.7z.001", "bust.stl"]


def test_a_rule_change_never_ingests_again_what_is_there(ingest_world):
    ingest_world(world(messages=ARCHIVES))
    run_cycle()
    kept = uploaded_names()
    channel_rules_update(channel=source(), take_kinds=["zip"], name_pattern="dragon")

    assert run_cycle().ingested == 0
    # A start point moved back rewinds the watermark; what is kept is known by its document, never fetched.
    channel_rules_update(channel=source(), start_from=StartPoint.MESSAGE, start_message_link="t.me/c/1001/11")
    assert watermark() == 10

    run = run_cycle()

    assert (run.ingested, run.duplicates, run.bytes_downloaded) == (0, 1, 0)
    assert uploaded_names() == kept


# Trying the rules on the channel ------------------------------------------------------------------------------


def test_the_preview_judges_the_last_documents_without_downloading(ingest_world):
    world_ = ingest_world(world(messages=ARCHIVES))
    world_.stats_reset()

    preview = channel_rules_preview(channel=source(), rules=Rules(kinds=("7z", "model")))

    assert [(row.file_name, bool(row.left_out)) for row in preview.rows] == [
        ("bust.stl", False),
        ("big.7z.001", False),
        ("dragon.zip", True),
    ]
    assert preview.taken == 2 and "ZIP is not a kind" in preview.rows[-1].left_out
    assert "upload.getFile" not in world_.stats()["calls"][READER]


def test_the_history_count_counts_sets_and_bytes_from_search_results(ingest_world):
    ingest_world(world(messages=ARCHIVES))
    known = sizes()

    count = channel_history_count(channel=source(), rules=Rules(kinds=("zip",)))

    assert (count.sets, count.bytes) == (3, sum(known.values()) - known["noise.bin"])
    assert (count.taken_sets, count.taken_bytes) == (1, known["dragon.zip"])
    assert not Package.objects.exists()


# Bad input ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "field", "says"),
    [
        ({"name_pattern": "dragon(["}, "name_pattern", "not a valid regular expression"),
        ({"min_bytes": "lots"}, "min_bytes", "is not a size"),
        ({"min_bytes": "2 MB", "max_bytes": "1 MB"}, "min_bytes", "swap them"),
        ({"take_kinds": ["zip", "tar"]}, "take_kinds", "Unknown kind tar"),
        ({"leave_extensions": "p/d"}, "leave_extensions", "not a file extension"),
        ({"start_from": "yesterday"}, "start_from", "Start from one of"),
        ({"start_from": "date"}, "start_date", "Choose the date"),
        ({"start_from": "date", "start_date": "30/06/2025"}, "start_date", "2025-06-30"),
        ({"start_from": "date", "start_date": "2030-01-01"}, "start_date", "1 Jan 2030 is still to come"),
        ({"start_from": "date", "start_date": "1999-01-01"}, "start_date", "before Telegram began"),
        ({"start_from": "message", "start_message_link": "t.me/c/999/4"}, "start_message_link", "another chat"),
        ({"start_from": "message", "start_message_link": "hello"}, "start_message_link", "Copy Post Link"),
        ({"start_from": "message"}, "start_message_link", "Paste the link"),
    ],
)
def test_bad_rules_are_refused_with_what_to_write(ingest_world, changes, field, says):
    ingest_world(world(messages=ARCHIVES))
    before = {name: getattr(source(), name) for name in ("name_pattern", "min_bytes", "start_from", "take_kinds")}

    with pytest.raises(ValidationError) as refused:
        channel_rules_update(channel=source(), **changes)

    assert says in refused.value.message_dict[field][0]
    assert {name: getattr(source(), name) for name in before} == before

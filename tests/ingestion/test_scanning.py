"""Scan only what changed: each rule of the decision, and what a cycle costs in Telegram requests."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.core.management import call_command
from django.utils import timezone

from ingestion.models import AccountChannelMap, SkippedPackage, SkipReason, TopicProgress
from ingestion.scanning import CHECK, SCAN, SKIP, scan_decide
from ingestion.services import skipped_package_retry, topic_set_fetch
from packages.models import Package
from telegram.sandbox.world import World
from tests.support.ingestion import READER, SOURCE, run_cycle, world

pytestmark = pytest.mark.django_db

NOW = timezone.now()


@pytest.fixture
def clock(monkeypatch):
    """Cycles ten minutes apart, as the schedule runs them."""
    moments = {"at": NOW}

    def advance(minutes: int = 10):
        moments["at"] += timedelta(minutes=minutes)

    monkeypatch.setattr("core.clock.now", lambda: moments["at"])
    return advance


def requests_of(cycle) -> dict[str, int]:
    """Telegram requests the reader made during one cycle, by method, besides connecting."""
    stats = World(settings.SANDBOX_PATH)
    stats.stats_reset()
    cycle()
    stats = World(settings.SANDBOX_PATH).stats()
    connecting = stats["connecting"].get(READER, {})
    calls = {method: count - connecting.get(method, 0) for method, count in stats["calls"].get(READER, {}).items()}
    return {method: count for method, count in calls.items() if count}


TRANSFER = {"upload.getFile", "upload.saveFilePart", "upload.saveBigFilePart", "messages.sendMedia"}


def reading(calls: dict[str, int]) -> dict[str, int]:
    """Requests that are not the file transfer itself."""
    return {method: count for method, count in calls.items() if method not in TRANSFER}


# The decision, rule by rule ---------------------------------------------------------------------------------


def state(**fields) -> AccountChannelMap:
    defaults = {"last_scanned_at": NOW - timedelta(minutes=10), "consecutive_empty_scans": 0}
    return AccountChannelMap(**{**defaults, **fields})


def test_retryable_skipped_packages_force_a_scan():
    decision = scan_decide(channel_map=state(consecutive_empty_scans=9), cycle=3, pending_retry=True, at=NOW)
    assert decision.action == SCAN


def test_never_scanned_is_scanned():
    assert scan_decide(channel_map=state(last_scanned_at=None), cycle=1, pending_retry=False, at=NOW).action == SCAN


def test_scanned_recently_and_idle_is_skipped():
    recent = state(last_scanned_at=NOW - timedelta(seconds=60), consecutive_empty_scans=1)
    assert scan_decide(channel_map=recent, cycle=2, pending_retry=False, at=NOW).action == SKIP


def test_scanned_recently_but_busy_is_checked():
    recent = state(last_scanned_at=NOW - timedelta(seconds=60), consecutive_empty_scans=0)
    assert scan_decide(channel_map=recent, cycle=2, pending_retry=False, at=NOW).action == CHECK


@pytest.mark.parametrize(("cycle", "action"), [(6, SKIP), (7, SKIP), (10, CHECK), (15, CHECK)])
def test_a_long_empty_streak_is_checked_every_nth_cycle(cycle, action):
    idle = state(consecutive_empty_scans=settings.INGEST_EMPTY_SCAN_BACKOFF_THRESHOLD)
    assert scan_decide(channel_map=idle, cycle=cycle, pending_retry=False, at=NOW).action == action


def test_a_short_streak_is_checked():
    idle = state(consecutive_empty_scans=settings.INGEST_EMPTY_SCAN_BACKOFF_THRESHOLD - 1)
    assert scan_decide(channel_map=idle, cycle=7, pending_retry=False, at=NOW).action == CHECK


# Cycles against the sandbox ---------------------------------------------------------------------------------

TOPICS = [{"id": 1, "title": "General"}, {"id": 7, "title": "Terrain"}, {"id": 42, "title": "Dragons"}]
FORUM_MESSAGES = [
    {"id": 3, "topic": 42, "document": {"name": "dragon.zip", "archive": [{"path": "d.stl", "size": 50}]}},
    {"id": 4, "topic": 7, "document": {"name": "tile.zip", "archive": [{"path": "t.stl", "size": 60}]}},
    {"id": 5, "text": "chatter"},
]
PLAIN = [
    {
        "id": 1100 + n,
        "title": f"Plain {n}",
        "type": "channel",
        "role": "source",
        "members": [READER],
        "messages": [{"id": 2, "document": {"name": f"p{n}.zip", "archive": [{"path": f"p{n}.stl", "size": 9}]}}],
    }
    for n in range(3)
]


def forum_world():
    return world(messages=FORUM_MESSAGES, forum=True, topics=TOPICS, more_chats=PLAIN)


def test_an_idle_cycle_costs_one_request_and_reads_no_history(ingest_world, clock):
    ingest_world(forum_world())
    run_cycle()
    clock()

    calls = requests_of(run_cycle)

    assert calls == {"messages.getPeerDialogs": 1}
    assert AccountChannelMap.objects.get(channel__chat__telegram_id=SOURCE).consecutive_empty_scans == 1


def test_one_new_archive_in_one_topic_costs_at_most_three_requests(ingest_world, clock):
    ingest_world(forum_world())
    run_cycle()
    clock()
    call_command(
        "sandbox_post",
        str(SOURCE),
        "--topic",
        "42",
        "--archive-json",
        '{"name": "wyrm.zip", "archive": [{"path": "w.stl", "size": 70}]}',
    )

    calls = requests_of(run_cycle)

    assert Package.objects.filter(file_name="wyrm.zip", creator="Dragons").exists()
    # Finding it costs at most three; its preview one more: the search for a photo posted with it.
    assert sum(reading(calls).values()) <= 3 + 1, calls
    assert calls["messages.search"] == 2, calls
    assert "messages.getForumTopics" not in calls, "known topics are not listed again"


def test_a_restart_keeps_the_state(ingest_world, clock):
    """Each cycle starts from the database alone, as a freshly started worker does."""
    ingest_world(forum_world())
    run_cycle()
    clock()
    idle = requests_of(run_cycle)
    clock()

    assert requests_of(run_cycle) == idle == {"messages.getPeerDialogs": 1}


def test_a_retryable_skipped_package_forces_a_scan(ingest_world, clock):
    messages = [
        {"id": 10, "document": {"name": "vols.part1.rar", "size": 100, "seed": 1}},
        {"id": 12, "document": {"name": "vols.part3.rar", "size": 50, "seed": 3}},
    ]
    ingest_world(world(messages=messages))
    run_cycle()
    assert SkippedPackage.objects.get().reason == SkipReason.MISSING_PART
    clock()

    calls = requests_of(run_cycle)

    assert calls.get("messages.search", 0) >= 1, "the pending retry is scanned even though nothing new arrived"
    assert SkippedPackage.objects.get().attempt_count == 2


def test_retry_from_the_ui_between_cycles_makes_the_next_cycle_scan(ingest_world, clock, settings):
    settings.INGEST_MAX_PACKAGE_BYTES = 3000
    ingest_world(world(messages=[{"id": 7, "document": {"name": "huge.zip", "size": 5000, "seed": 1}}]))
    run_cycle()
    clock()
    assert requests_of(run_cycle) == {"messages.getPeerDialogs": 1}
    settings.INGEST_MAX_PACKAGE_BYTES = 10_000
    skipped_package_retry(skipped=SkippedPackage.objects.get())
    clock()

    run_cycle()

    assert Package.objects.filter(file_name="huge.zip").exists()


def test_backoff_checks_an_idle_channel_every_nth_cycle(ingest_world, clock, settings):
    settings.INGEST_EMPTY_SCAN_BACKOFF_THRESHOLD = 2
    settings.INGEST_EMPTY_SCAN_BACKOFF_EVERY_NTH = 3
    ingest_world(world(messages=[{"id": 7, "document": {"name": "a.zip", "archive": [{"path": "a", "size": 1}]}}]))
    costs = []
    for _ in range(7):
        costs.append(sum(requests_of(run_cycle).values()))
        clock()

    # cycle 1 scans; 2 and 3 check (streak 1, 2); from then on only cycles 6, 9… check
    assert costs[1:] == [1, 1, 0, 0, 1, 0]


def test_a_new_topic_is_discovered_with_its_title(ingest_world, clock):
    ingest_world(forum_world())
    run_cycle()
    clock()
    sandbox_world = World(settings.SANDBOX_PATH)
    sandbox_world.topic_create(SOURCE, 99, "Spaceships")
    sandbox_world.message_post(SOURCE, topic=99, document={"name": "ship.zip", "archive": [{"path": "s", "size": 5}]})

    calls = requests_of(run_cycle)

    assert calls.get("messages.getForumTopics") == 1
    assert TopicProgress.objects.filter(topic_id=99, title="Spaceships").exists()
    assert Package.objects.get(file_name="ship.zip").creator == "Spaceships"


def test_turning_a_topic_back_on_scans_it_from_its_watermark(ingest_world, clock):
    ingest_world(forum_world())
    run_cycle()
    terrain = TopicProgress.objects.get(topic_id=7)
    TopicProgress.objects.filter(pk=terrain.pk).update(fetch_enabled=False)
    clock()
    call_command(
        "sandbox_post",
        str(SOURCE),
        "--topic",
        "7",
        "--archive-json",
        '{"name": "rocks.zip", "archive": [{"path": "r.stl", "size": 8}]}',
    )
    run_cycle()
    assert not Package.objects.filter(file_name="rocks.zip").exists()

    terrain.refresh_from_db()
    topic_set_fetch(topic=terrain, fetch_enabled=True)
    clock()
    run_cycle()

    assert Package.objects.filter(file_name="rocks.zip").exists()


def test_scan_state_is_visible_on_the_channel_page_and_in_the_api(ingest_world, clock, settings, client):
    from django.contrib.auth import get_user_model

    settings.INGEST_EMPTY_SCAN_BACKOFF_THRESHOLD = 2
    ingest_world(world(messages=[{"id": 7, "document": {"name": "a.zip", "archive": [{"path": "a", "size": 1}]}}]))
    for _ in range(3):
        run_cycle()
        clock()
    client.force_login(get_user_model().objects.create_user("operator", password="x"))
    channel_map = AccountChannelMap.objects.get(channel__chat__telegram_id=SOURCE)

    (state,) = client.get(f"/api/channels/{channel_map.channel_id}/").json()["scan_state"]
    page = client.get(f"/channels/{channel_map.channel_id}/").content.decode()

    assert state["consecutive_empty_scans"] == 2 and state["in_backoff"] is True
    assert state["scanned_through_message_id"] == 7 and state["last_scanned_at"]
    assert "Backing off" in page and "2 empty in a row" in page


def test_retry_all_rewinds_each_channel_to_below_its_lowest_row_in_a_bounded_number_of_queries(
    ingest_world, settings, django_assert_max_num_queries
):
    from ingestion.services import skipped_packages_retry_all

    settings.INGEST_MAX_PACKAGE_BYTES = 3000
    huge = [{"id": 7 + n, "document": {"name": f"huge{n}.zip", "size": 5000, "seed": n}} for n in range(30)]
    ingest_world(world(messages=huge))
    run_cycle()
    assert SkippedPackage.objects.count() == 30 and watermark_of_source() == 36

    with django_assert_max_num_queries(12):
        assert skipped_packages_retry_all(reason="SIZE_LIMIT") == 30

    assert watermark_of_source() == 6 and not SkippedPackage.objects.exists()
    assert AccountChannelMap.objects.get(channel__chat__telegram_id=SOURCE).last_scanned_at is None


def watermark_of_source() -> int:
    return AccountChannelMap.objects.get(channel__chat__telegram_id=SOURCE).last_processed_message_id

"""Page speed at scale: 100,000 packages with previews, 1,000,000 listed files, 10,000 skipped packages,
100,000 reminder run targets. Prints p50/p95 and database queries of each dashboard page, of the
Packages page's filters and sorts, and of word and substring searches, through Django's test client
(goals: p95 ≤ 150 ms a page and a filter, search ≤ 100 ms, a bounded number of queries a page).

    .venv/bin/python -m bench.dashboard [--requests 20]
"""

import argparse
import statistics
import time

from bench.harness import bench_django, catalog_seed

PACKAGES = 100_000
FILES_PER_PACKAGE = 10
SKIPPED = 10_000
RUNS = 100
GROUPS = 1_000  # RUNS × GROUPS run targets


def seed() -> None:
    from django.db import connection
    from django.utils import timezone

    from accounts.models import AccountChat, AuthState, Chat, TelegramAccount
    from ingestion.models import AccountChannelMap, Channel, IngestionRun, SkippedPackage
    from ingestion.services import channels_for_known_chats
    from reminders.models import Reminder, ReminderRun

    now = timezone.now()
    account = TelegramAccount.objects.create(phone="+15550000001", auth_state=AuthState.AUTHENTICATED)
    chats = Chat.objects.bulk_create(
        Chat(telegram_id=10_000 + n, title=f"Chat {n}", type="supergroup" if n % 2 else "channel")
        for n in range(GROUPS + 20)
    )
    AccountChat.objects.bulk_create(
        AccountChat(account=account, chat=chat, access_hash=n) for n, chat in enumerate(chats)
    )
    channels = Channel.objects.bulk_create(Channel(chat=chat, is_active=True) for chat in chats[:20])
    channels_for_known_chats()  # what a chat refresh does: a row for every other chat too
    AccountChannelMap.objects.bulk_create(AccountChannelMap(account=account, channel=channel) for channel in channels)
    IngestionRun.objects.bulk_create(IngestionRun(account=account, status="success") for _ in range(500))
    catalog_seed(packages=PACKAGES, files_per_package=FILES_PER_PACKAGE, chats=[c.chat for c in channels], now=now)
    with connection.cursor() as cursor:
        # A preview for every package: half the photo posted with it, half an image inside, as ingestion sets.
        cursor.execute(
            "INSERT INTO packages_packagepreview (package_id, source, path, source_message_id, image, width, "
            "height, created_at) SELECT id, CASE WHEN id % 2 = 0 THEN 'photo' ELSE 'archive' END, "
            "CASE WHEN id % 2 = 0 THEN '' ELSE 'images/cover.jpg' END, CASE WHEN id % 2 = 0 THEN id END, "
            "'previews/' || id || '.webp', 320, 240, created_at FROM packages_package"
        )
        cursor.execute(
            "UPDATE packages_package p SET preview_id = v.id FROM packages_packagepreview v WHERE v.package_id = p.id"
        )
        # What autovacuum does on a live database soon after such inserts (visibility map, statistics).
        cursor.execute("VACUUM ANALYZE")
    SkippedPackage.objects.bulk_create(
        SkippedPackage(
            channel=channels[n % 20],
            message_id=1_000_000 + n,
            account=account,
            file_name=f"skipped {n}.zip",
            reason=["DOWNLOAD_FAILED", "MISSING_PART", "SIZE_LIMIT"][n % 3],
            error_message="bench",
        )
        for n in range(SKIPPED)
    )
    reminder = Reminder.objects.create(account=account, name="Weekly drop", timezone="UTC")
    ReminderRun.objects.bulk_create(
        ReminderRun(reminder=reminder, account=account, status="success", total=GROUPS, sent=GROUPS)
        for _ in range(RUNS)
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO reminders_reminderruntarget "
            "(run_id, chat_id, status, random_ids, parts_sent, attempts, error, message_ids, album_ids, "
            "previous_removed, pinned, previous_post, previous_note) "
            "SELECT r.id, c.id, 'sent', ARRAY[r.id * 100000 + c.id], 1, 1, '', ARRAY[c.id]::bigint[], '{}', "
            "false, false, '', '' FROM reminders_reminderrun r "
            "CROSS JOIN (SELECT id FROM accounts_chat ORDER BY id LIMIT %s) c",
            [GROUPS],
        )
        cursor.execute("VACUUM ANALYZE")


def measure(client, url: str, requests: int) -> tuple[float, float, int, int]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    for _ in range(2):
        client.get(url)  # warm caches and connections
    timings = []
    for _ in range(requests):
        with CaptureQueriesContext(connection) as queries:
            started = time.perf_counter()
            response = client.get(url)
            timings.append((time.perf_counter() - started) * 1000)
    timings.sort()
    p95 = timings[min(len(timings) - 1, round(0.95 * (len(timings) - 1)))]
    return statistics.median(timings), p95, len(queries), response.status_code


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=20)
    args = parser.parse_args()
    bench_django("dashboard")
    started = time.monotonic()
    seed()
    print(f"seeded in {time.monotonic() - started:.0f} s")
    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.utils import timezone

    from ingestion.models import Channel

    today = timezone.localdate()
    week_ago = today - timezone.timedelta(days=7)
    client = Client(HTTP_HOST="localhost")
    client.force_login(get_user_model().objects.create_superuser("bench", password="x"))
    pages = [
        ("dashboard", "/"),
        ("operations", "/operations/"),
        ("accounts", "/accounts/"),
        ("channels", "/channels/"),
        ("ingestion runs", "/ingestion/runs/"),
        ("packages", "/packages/"),
        ("skipped", "/skipped/"),
        ("reminders", "/reminders/"),
        ("activity", "/activity/"),
        ("notifications", "/notifications/"),
    ]
    searches = [
        ("search: one word", "/packages/?q=dragon"),
        ("search: two word prefixes", "/packages/?q=gob+part_7"),
        ("search: a rare path", "/packages/?q=sword-4242"),
        ("search: a substring everywhere", "/packages/?q=agon"),
        ("search: a rare substring", "/packages/?q=ord-4242"),
        ("search: a substring + filter", "/packages/?q=ower-&tag=busts&sort=largest"),
    ]
    filters = [
        ("filter: creator", "/packages/?creator=creator-42"),
        ("filter: tag", "/packages/?tag=sale"),
        ("filter: channel", f"/packages/?channel={Channel.objects.order_by('pk').first().pk}"),
        ("filter: type", "/packages/?type=zip"),
        ("filter: size", "/packages/?size_min=10&size_max=20"),
        ("filter: dates", f"/packages/?added_from={week_ago}&added_to={today}"),
        ("sort: name", "/packages/?sort=name"),
        ("sort: largest", "/packages/?sort=largest"),
        ("filter: repacks", "/packages/?repacks=1"),
        ("grid", "/packages/?view=grid"),
        ("grid: tag + sort", "/packages/?view=grid&tag=busts&sort=largest"),
        ("grid: search", "/packages/?view=grid&q=dragon"),
        ("filters: creator + type + sort", "/packages/?creator=creator-7&type=zip&sort=smallest"),
    ]
    print(f"{'page':<32} {'p50 ms':>8} {'p95 ms':>8} {'queries':>8} {'status':>7}")
    for label, url in pages + filters + searches:
        p50, p95, queries, status = measure(client, url, args.requests)
        print(f"{label:<32} {p50:>8.1f} {p95:>8.1f} {queries:>8} {status:>7}")


if __name__ == "__main__":
    main()

"""Every page of the console fits, in Chromium: the demo world of `make run` ingested, its reminders and bot made,
then every route of the URL conf opened as an operator and as a viewer, each at 1440 × 900 and at 390 × 844, and
again with 200 rows in every list. No page is wider than the window, no link, button, field or label has its text
cut or lies outside its card or table cell, and the console stays quiet. One browser; each page is opened once a
role and looked at in both widths."""

import copy
import io
import itertools

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import Client
from django.urls import get_resolver, reverse
from playwright.sync_api import expect

from accounts.models import Chat, TelegramAccount
from core.models import Notification
from ingestion.models import Channel, IngestionRun, MapRole, SkippedPackage
from packages.models import BotActivity, BotPerson, Collection, Package
from reminders.models import Audience, Reminder, ReminderRun
from tests.support.browser import SIZES, TEAM_PASSWORD, log_in_as, off_the_page_thread, team_add, top
from tests.support.ingestion import run_cycle
from tests.support.walk import MISFITS, NOT_PAGES, UNZONED_TIMES, ConsoleWatch, named_patterns

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("fresh_buckets")]

DEMO = settings.BASE_DIR / "telegram" / "sandbox" / "worlds" / "demo.json"
ROWS = 200
# Pages a route alone does not show: a search, the grid of cards, a package opened from a search of its name.
WITH_QUERIES = {"packages:list": ["?q=dragon", "?view=grid"], "packages:detail": ["?q=red-dragon.zip"]}


@pytest.fixture
def demo(settings, tmp_path):
    """The demo world as `make run` loads it, each reader's cycle run once."""
    settings.SANDBOX_PATH = tmp_path / "sandbox"
    settings.INGEST_STAGING_DIR = tmp_path / "staging"

    def build():
        call_command("sandbox_load", str(DEMO), "--authorize", stdout=io.StringIO())
        readers = TelegramAccount.objects.filter(channel_maps__role=MapRole.READER).distinct()
        for phone in readers.values_list("phone", flat=True):
            run_cycle(phone)
        call_command("demo_reminders", stdout=io.StringIO())
        call_command("demo_bot", stdout=io.StringIO())

    off_the_page_thread(build)


def _many(model, row, change) -> None:
    """ROWS copies of `row`, each made different where a unique field needs it."""
    copies = []
    for number in range(ROWS):
        twin = copy.copy(row)
        twin.pk = twin.id = None
        change(twin, number)
        copies.append(twin)
    model.objects.bulk_create(copies)


def _rows_added() -> None:
    """200 more rows in every list: packages, channels, runs, skipped sets, reminders and their runs, notifications,
    the bot's people and what it did."""
    numbers = itertools.count(900_000_000)
    package = Package.objects.get(file_name="red-dragon.zip")
    _many(
        Package,
        package,
        lambda twin, n: vars(twin).update(
            content_hash=f"{n:064x}",
            source_message_id=100_000 + n,
            file_name=f"copy-{n:03d} of {package.file_name}",
            preview_id=None,  # a preview is its own package's
        ),
    )
    source = Channel.objects.filter(is_destination=False).order_by("pk").first()
    for n in range(ROWS):
        chat = Chat.objects.create(telegram_id=next(numbers), title=f"Miniature models channel {n:03d}", type="channel")
        twin = copy.copy(source)
        twin.pk = twin.id = None
        twin.chat = chat
        twin.save()
    _many(IngestionRun, IngestionRun.objects.order_by("pk").first(), lambda twin, n: None)
    _many(SkippedPackage, SkippedPackage.objects.first(), lambda twin, n: vars(twin).update(message_id=500_000 + n))
    reminder = Reminder.objects.order_by("pk").first()
    _many(Reminder, reminder, lambda twin, n: vars(twin).update(name=f"{reminder.name} {n:03d}", periodic_task_id=None))
    _many(ReminderRun, ReminderRun.objects.order_by("pk").first(), lambda twin, n: vars(twin).update(slot=None))
    _many(Notification, Notification.objects.first(), lambda twin, n: vars(twin).update(subject=f"walk:{n}"))
    people = BotPerson.objects.bulk_create(
        BotPerson(user_id=800_000 + n, first_name=f"Member {n:03d}", username=f"member_with_a_long_name_{n:03d}")
        for n in range(ROWS)
    )
    BotActivity.objects.bulk_create(
        BotActivity(
            person=person,
            kind="search",
            text=f"/search red-dragon_presupported_32mm_{n:03d}.zip: 3 packages, sent Red-Dragon-Ultra-Detailed-v2.7z",
        )
        for n, person in enumerate(people)
    )


def _pk_for(name: str) -> int | None:
    """The row a route's <pk> stands for, chosen by what the route is about; None when the demo has none."""
    dragon = Package.objects.filter(file_name="red-dragon.zip")
    runs = ReminderRun.objects.order_by("-status", "pk")  # a paused run first, when there is one
    by_prefix = [
        ("ingestion:channel-topic-fetch", Channel.objects.none()),
        ("ingestion:channel", Channel.objects.filter(chat__packages__in=dragon)),
        ("ingestion:run", IngestionRun.objects.order_by("pk")),
        ("ingestion:skipped", SkippedPackage.objects.order_by("pk")),
        ("packages:collection", Collection.objects.order_by("pk")),
        ("packages:", dragon),
        ("reminders:activity", runs),
        ("reminders:audience", Audience.objects.order_by("pk")),
        ("reminders:", Reminder.objects.order_by("pk")),
        ("accounts:", TelegramAccount.objects.order_by("pk")),
        ("attention-", runs),
        ("notifications", Notification.objects.order_by("pk")),
    ]
    rows = next((rows for prefix, rows in by_prefix if name.startswith(prefix)), None)
    return None if rows is None else rows.values_list("pk", flat=True).first()


def console_pages(client: Client) -> dict[str, str]:
    """Every named route a person opens with GET, and the pages only a query shows: {name: path}. POST targets
    answer 405 and drop out; fragments (the bell, rows) have no <html>."""
    pages = {}
    for name, pattern in named_patterns(get_resolver().url_patterns):
        if NOT_PAGES.match(name) or name in pages or name == "api-docs":  # Swagger UI's layout is its own
            continue
        wanted = set(pattern.pattern.regex.groupindex)
        pk = _pk_for(name) if wanted == {"pk"} else None
        if wanted and pk is None:
            continue
        path = reverse(name, kwargs={"pk": pk} if pk else {})
        response = client.get(path)
        if response.status_code == 200 and b"<html" in response.content:
            pages[name] = path
            for number, query in enumerate(WITH_QUERIES.get(name, ()), start=1):
                pages[f"{name}-{number}"] = path + query
    return pages


def _walk(page, url: str, pages: dict[str, str], artifacts, *, role: str, rows: str) -> dict[str, list[str]]:
    """Each page opened once, looked at wide then on a phone: what its console said, what does not fit."""
    watch = ConsoleWatch(page)
    heard = {}
    for name, path in sorted(pages.items()):
        watch.problems.clear()
        page.set_viewport_size(SIZES["wide"])
        page.goto(f"{url}{path}")
        page.wait_for_load_state("networkidle")
        if name == "dashboard":
            page.locator(".bell-button").click()  # the bell's panel loads on open
            expect(page.locator(".bell-panel-body")).not_to_contain_text("Loading…")
            page.keyboard.press("Escape")
        for size, viewport in SIZES.items():
            page.set_viewport_size(viewport)
            page.wait_for_timeout(50)  # one frame for the layout of the new width
            said = page.evaluate(MISFITS) + [f"a time without its zone: {t}" for t in page.evaluate(UNZONED_TIMES)]
            watch.problems.extend(f"{viewport['width']} px: {problem}" for problem in said)
            if rows == "demo" or said:  # the long pages of 200 rows are drawn only to show what is wrong
                top(page)
                shot = f"walk-{rows}-{role}-{size}-{name.replace(':', '-')}.png"
                page.screenshot(path=artifacts / shot, full_page=True)
        if watch.problems:
            heard[path] = list(watch.problems)
    return heard


def _every_page_fits(live_server, django_user_model, browser, artifacts, rows: str) -> None:
    off_the_page_thread(lambda: team_add(django_user_model))
    heard = {}
    for role, username in (("operator", "vera"), ("viewer", "victor")):
        context = browser.new_context(viewport=SIZES["wide"])
        context.set_default_timeout(10_000)
        page = context.new_page()
        log_in_as(page, live_server.url, username, TEAM_PASSWORD)
        client = Client()
        client.force_login(django_user_model.objects.get(username=username))
        pages = off_the_page_thread(lambda client=client: console_pages(client))
        assert {"dashboard", "packages:list", "packages:detail", "ingestion:channels", "bot:page"} <= set(pages)
        heard |= {
            f"{role} {path}": problems
            for path, problems in _walk(page, live_server.url, pages, artifacts, role=role, rows=rows).items()
        }
        context.close()
    assert not heard, "\n".join(f"{where}:\n  " + "\n  ".join(problems) for where, problems in heard.items())


def test_every_page_fits_with_the_demo_data(live_server, transactional_db, demo, django_user_model, browser, artifacts):
    _every_page_fits(live_server, django_user_model, browser, artifacts, "demo")


@pytest.mark.large  # some three minutes: `make test` walks it, `make test-fast` leaves it out
def test_every_page_fits_with_200_rows_in_every_list(
    live_server, transactional_db, demo, django_user_model, browser, artifacts
):
    off_the_page_thread(_rows_added)
    _every_page_fits(live_server, django_user_model, browser, artifacts, "rows")

"""In Chromium, with data on every page: the console of every page of the console is quiet (no CSP violation,
no htmx complaint, no 404), found by walking the URL conf as an operator and as a viewer; the dashboard's
attention list → Resume → the notification resolves; a channel's Ingest now → its run's page."""

import re

import pytest
from django.test import Client
from django.urls import get_resolver, reverse
from django.utils import timezone
from playwright.sync_api import expect

from accounts.models import TelegramAccount
from core.models import Notification, RunStatus
from ingestion import services as ingestion_services
from ingestion.models import Channel, IngestionRun, IngestionTrigger, SkippedPackage
from ingestion.pipeline import ingestion_run_execute
from ingestion.services import runs as ingestion_run_services
from packages.models import Package
from reminders.models import Reminder, ReminderRun
from reminders.services import reminder_fire, reminder_run_cancel
from tests.support import reminders
from tests.support.browser import SIZES, log_in_as, log_in_as_operator, off_the_page_thread, top
from tests.support.ingestion import READER, SOURCE, run_cycle, world
from tests.support.reminders import groups_world
from tests.support.walk import MISFITS, NOT_PAGES, UNZONED_TIMES, ConsoleWatch, named_patterns

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("fast_pace", "fresh_buckets")]


MESSAGES = [
    {"id": 11, "document": {"name": "dragon.zip", "archive": [{"path": "dragon/body.stl", "size": 2000}]}},
    {"id": 12, "document": {"name": "bust.stl", "size": 4000, "seed": 3}},
    {"id": 13, "document": {"name": "huge.zip", "archive": [{"path": "huge.stl", "size": 60_000}]}},
]
# Every page the walk must reach; a page added later is walked too, without being named here.
MUST_VISIT = {
    "dashboard",
    "operations",
    "notifications",
    "accounts:list",
    "ingestion:channels",
    "ingestion:channel-detail",
    "ingestion:runs",
    "ingestion:run-detail",
    "ingestion:skipped",
    "packages:list",
    "packages:detail",
    "reminders:list",
    "reminders:detail",
    "reminders:compose",
    "reminders:activity",
    "reminders:activity-run",
    "api-docs",
}


@pytest.fixture(autouse=True)
def storage(settings, tmp_path):
    settings.INGEST_STAGING_DIR = tmp_path / "staging"
    settings.INGEST_MAX_PACKAGE_BYTES = 30_000  # huge.zip is skipped as too large


@pytest.fixture
def console_world(fanout_world, at, enqueued):
    """A source channel ingested once (two packages, one set skipped) and a reminder run paused by its window."""
    data = world(messages=MESSAGES)
    groups = groups_world(groups=10)
    data["accounts"] += groups["accounts"]
    data["chats"] += groups["chats"]

    def build():
        fanout_world(data)
        run_cycle()
        run = reminders.paused_run(at)  # 4 of 10 groups, then the window closes
        assert run.status == RunStatus.PAUSED, run.error_summary
        enqueued.clear()
        return run

    return off_the_page_thread(build)


def _object_for(name: str, paused: ReminderRun) -> dict[str, int]:
    """The pk a route's <int:pk> stands for, chosen by what the route is about."""
    channel = Channel.objects.get(chat__telegram_id=SOURCE)
    by_prefix = [
        ("ingestion:channel-topic-fetch", None),
        ("ingestion:channel", channel.pk),
        ("ingestion:run", IngestionRun.objects.order_by("pk").first().pk),
        ("ingestion:skipped", SkippedPackage.objects.first().pk),
        ("packages:", Package.objects.first().pk),
        ("reminders:activity", paused.pk),
        ("reminders:", Reminder.objects.first().pk),
        ("accounts:", TelegramAccount.objects.get(phone=READER).pk),
        ("attention-", paused.pk),
        ("notifications", Notification.objects.first().pk),
    ]
    pk = next((pk for prefix, pk in by_prefix if name.startswith(prefix)), None)
    return {} if pk is None else {"pk": pk}


def console_pages(client: Client, paused: ReminderRun) -> dict[str, str]:
    """Every named route a person can open with GET: {name: path}; forms' POST targets answer 405 and drop out,
    fragments (bell, rows) have no <html>."""
    pages = {}
    for name, pattern in named_patterns(get_resolver().url_patterns):
        if NOT_PAGES.match(name) or name in pages:
            continue
        wanted = set(pattern.pattern.regex.groupindex)
        kwargs = _object_for(name, paused) if wanted == {"pk"} else {}
        if wanted and set(kwargs) != wanted:
            continue
        path = reverse(name, kwargs=kwargs)
        response = client.get(path)
        if response.status_code == 200 and b"<html" in response.content:
            pages[name] = path
    return pages


def _walk(page, live_server, pages: dict[str, str], artifacts, *, role: str, size: str) -> dict[str, list[str]]:
    """Open every page; what the console, the page and the network complained of, and what does not fit, by path."""
    watch = ConsoleWatch(page)
    heard = {}
    for name, path in sorted(pages.items()):
        watch.problems.clear()
        page.goto(f"{live_server.url}{path}")
        page.wait_for_load_state("networkidle")
        if name == "dashboard":
            page.locator(".bell-button").click()  # the bell's panel loads on open
            expect(page.locator(".bell-panel-body")).not_to_contain_text("Loading…")
            page.keyboard.press("Escape")
        eta = page.locator("form [hx-post$='/reminders/eta/']")
        if role == "operator" and eta.count():
            # Any change to a reminder's form asks for its ETA pill again (a request from inside the form).
            with page.expect_response(lambda response: "/reminders/eta/" in response.url):
                eta.first.evaluate("pill => pill.closest('form').dispatchEvent(new Event('change', {bubbles: true}))")
        page.wait_for_timeout(300)
        shown = page.inner_text("body")
        if "{#" in shown or "{%" in shown or "{{" in shown:
            watch.problems.append("template syntax shown as text")
        if name != "api-docs":  # Swagger UI's own layout is its business
            watch.problems.extend(page.evaluate(MISFITS))
        watch.problems.extend(f"a time without its zone: {text}" for text in page.evaluate(UNZONED_TIMES))
        top(page)
        page.screenshot(path=artifacts / f"console-{role}-{size}-{name.replace(':', '-')}.png", full_page=True)
        if watch.problems:
            heard[path] = list(watch.problems)
    return heard


def _log_in_as(page, url: str, django_user_model, role: str):
    if role == "operator":
        log_in_as_operator(page, url, django_user_model)
        return django_user_model.objects.get(username="operator")
    viewer = off_the_page_thread(lambda: django_user_model.objects.create_user(username="viewer", password="v1ew-pass"))
    log_in_as(page, url, "viewer", "v1ew-pass")
    return viewer


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("role", ["operator", "viewer"])
def test_every_page_fits_and_has_a_quiet_console(
    live_server, transactional_db, console_world, django_user_model, browser, artifacts, role, size
):
    context = browser.new_context(viewport=SIZES[size])
    context.set_default_timeout(10_000)
    page = context.new_page()
    user = _log_in_as(page, live_server.url, django_user_model, role)
    client = Client()
    client.force_login(user)
    pages = off_the_page_thread(lambda: console_pages(client, console_world))
    expected = MUST_VISIT if role == "operator" else MUST_VISIT - {"reminders:compose"}
    assert set(pages) >= expected, f"the walk missed {sorted(expected - set(pages))}"

    heard = _walk(page, live_server, pages, artifacts, role=role, size=size)

    context.close()
    assert not heard, "\n".join(f"{path}:\n  " + "\n  ".join(problems) for path, problems in heard.items())


def test_a_viewer_sees_no_change_buttons(live_server, transactional_db, console_world, django_user_model, page):
    _log_in_as(page, live_server.url, django_user_model, "viewer")
    page.goto(f"{live_server.url}/")
    expect(page.get_by_role("button", name=re.compile(r"^Resume run"))).to_have_count(0)
    page.goto(f"{live_server.url}/accounts/")
    expect(page.get_by_role("link", name="Add account")).to_have_count(0)
    expect(page.locator("#account-rows tr", has_text=READER).locator("td").nth(5)).to_have_text("On")
    page.goto(f"{live_server.url}/reminders/new/")
    expect(page.locator("main")).to_contain_text("Only operators write and change reminders; ask one to do this.")
    page.goto(f"{live_server.url}/packages/")
    expect(page.get_by_role("button", name=re.compile(r"^Edit"))).to_have_count(0)
    expect(page.get_by_role("checkbox", name=re.compile(r"^Choose "))).to_have_count(0)


def test_a_viewer_sees_every_channel_value_and_no_control_that_would_be_refused(
    live_server, transactional_db, console_world, django_user_model, page, artifacts
):
    Channel.objects.filter(chat__telegram_id=SOURCE).update(category="Miniatures", expiration_days=7)
    source_pk = Channel.objects.get(chat__telegram_id=SOURCE).pk
    _log_in_as(page, live_server.url, django_user_model, "viewer")

    page.goto(f"{live_server.url}{reverse('ingestion:channels')}")

    source = page.locator("#channel-rows tr", has_text="Models A")
    expect(source.locator("td").nth(1)).to_have_text("Active")
    expect(source.locator("td").nth(2)).to_contain_text("Miniatures")
    expect(source.locator("td").nth(2)).to_contain_text("Raw files kept 7 days")
    expect(page.get_by_role("link", name="Make destination")).to_have_count(0)
    expect(page.get_by_role("link", name="Writers")).to_have_count(0)
    page.goto(f"{live_server.url}{reverse('ingestion:channel-destination', args=[source_pk])}")  # by its address
    expect(page.get_by_role("dialog")).to_contain_text("Only operators choose the destination and its writers")
    expect(page.get_by_role("dialog").get_by_role("button", name="Make destination")).to_have_count(0)
    page.goto(f"{live_server.url}{reverse('ingestion:channels')}")
    top(page)
    page.screenshot(path=artifacts / "channels-viewer.png", full_page=True)


def test_resume_from_the_attention_list_resolves_the_notification(
    live_server, transactional_db, console_world, enqueued, django_user_model, page, artifacts
):
    run = console_world
    log_in_as_operator(page, live_server.url, django_user_model)
    attention = page.locator("#attention")
    expect(attention.get_by_role("heading", name="Needs attention")).to_be_visible()
    item = page.locator(f"#attention-run-{run.pk}")
    expect(item).to_contain_text("Flash sale — 4 of 10 groups delivered, 6 pending")
    expect(attention).to_contain_text("Too large")
    expect(page.locator("#bell-count")).to_contain_text("1")
    top(page)
    page.screenshot(path=artifacts / "dashboard-attention.png", full_page=True)

    item.get_by_role("button", name=f"Resume run #{run.pk}").click()

    expect(attention).to_contain_text(f"Flash sale run #{run.pk}: resumed, 6 groups to go.")
    expect(page.locator(f"#attention-run-{run.pk}")).to_have_count(0)
    expect(page.locator("#bell-count")).to_have_class(re.compile(r"\bis-zero\b"))
    expect(page.locator("#stat-notifications-unread")).to_have_text("0")
    assert enqueued == [run.pk]
    assert ReminderRun.objects.get(pk=run.pk).status == RunStatus.QUEUED
    assert Notification.objects.get(subject=f"reminder-run:{run.pk}").resolved_at is not None
    top(page)
    page.screenshot(path=artifacts / "dashboard-attention-resumed.png", full_page=True)

    page.goto(f"{live_server.url}/notifications/")
    expect(page.locator(".notification").first).to_contain_text("resolved by itself")
    top(page)
    page.screenshot(path=artifacts / "notifications-resolved.png", full_page=True)


def test_ingest_now_on_a_channel_leads_to_its_run_page(
    live_server, transactional_db, console_world, django_user_model, page, artifacts
):
    channel = Channel.objects.get(chat__telegram_id=SOURCE)
    log_in_as_operator(page, live_server.url, django_user_model)
    page.goto(f"{live_server.url}{reverse('ingestion:channel-detail', args=[channel.pk])}")
    expect(page.get_by_role("heading", name="Latest packages")).to_be_visible()
    expect(page.locator(".package-table")).to_contain_text("dragon.zip")
    expect(page.locator(".scan-table")).to_contain_text("never scanned")
    top(page)
    page.screenshot(path=artifacts / "channel-detail.png", full_page=True)

    page.get_by_role("button", name="Ingest now").click()

    run = IngestionRun.objects.get(channel=channel)
    expect(page).to_have_url(re.compile(rf"/ingestion/runs/{run.pk}/$"))
    expect(page.get_by_role("heading", level=1)).to_contain_text(f"Run #{run.pk}")
    expect(page.locator(".messages")).to_contain_text("Ingesting Models A now with")
    off_the_page_thread(lambda: ingestion_run_execute(run_id=run.pk))
    # The page polls every 2 s until the run is over.
    expect(page.locator("h1 .badge")).to_have_text("Did nothing", timeout=15_000)
    expect(page.locator(".messages .alert")).to_have_count(0)  # the banner says how it ended; "now" went stale
    expect(page.locator(".scan-table")).to_contain_text("Ingest now: nothing new since the last scan")
    top(page)
    page.screenshot(path=artifacts / "run-detail.png", full_page=True)

    page.goto(
        f"{live_server.url}{reverse('ingestion:run-detail', args=[IngestionRun.objects.order_by('pk').first().pk])}"
    )
    expect(page.locator("#run-body")).to_contain_text("huge.zip")
    top(page)
    page.screenshot(path=artifacts / "run-detail-first-cycle.png", full_page=True)


def test_swaps_keep_the_console_quiet(live_server, transactional_db, console_world, django_user_model, page):
    """HTMX swaps of rows, results and dialogs log nothing: no CSP violation (htmx injects no style), no htmx error."""
    watch = ConsoleWatch(page)
    log_in_as_operator(page, live_server.url, django_user_model)

    page.goto(f"{live_server.url}{reverse('ingestion:channels')}")
    source = page.locator("#channel-rows tr", has_text="Models A")
    with page.expect_response(lambda response: "/active/" in response.url):
        source.locator("label.switch").click()  # the drawn switch; its checkbox is invisible under it
    expect(page.locator("#channel-rows tr", has_text="Models A").get_by_role("switch")).not_to_be_checked()
    page.locator("#channel-rows tr", has_text="Models A").get_by_role("link", name="Make destination").click()
    expect(page.get_by_role("dialog")).to_be_visible()
    page.keyboard.press("Escape")

    page.goto(f"{live_server.url}{reverse('accounts:list')}")
    page.locator("#account-rows tr").first.get_by_role("button", name="Refresh chats").click()
    expect(page.locator("#account-rows tr").first.locator(".row-message")).to_be_visible()

    page.goto(f"{live_server.url}{reverse('packages:list')}")
    with page.expect_response(lambda response: "q=dragon" in response.url):
        page.get_by_role("searchbox").press_sequentially("dragon")
    expect(page.locator("#package-results")).to_contain_text("dragon.zip")
    page.go_back()
    page.wait_for_load_state("networkidle")

    page.goto(f"{live_server.url}/")
    page.locator(".bell-button").click()
    expect(page.locator(".bell-panel-body")).not_to_contain_text("Loading…")
    page.wait_for_timeout(300)

    assert watch.problems == []


def test_ingest_now_starts_at_once_a_run_that_waits_for_its_delayed_start(
    live_server, transactional_db, console_world, at, django_user_model, page, monkeypatch, artifacts
):
    at(timezone.now())  # the reminder world left the console's clock on another day
    sent = []
    monkeypatch.setattr(
        ingestion_run_services, "_enqueue", lambda run_id, countdown=0: sent.append((run_id, countdown))
    )
    channel = Channel.objects.get(chat__telegram_id=SOURCE)
    account = TelegramAccount.objects.get(phone=READER)
    run, _ = ingestion_services.ingestion_run_request(account=account, trigger=IngestionTrigger.SCHEDULE, countdown=240)
    assert sent == [(run.pk, 240)]
    log_in_as_operator(page, live_server.url, django_user_model)

    page.goto(f"{live_server.url}{reverse('ingestion:run-detail', args=[run.pk])}")
    waits = page.locator("#run-body .page-alert")
    expect(waits).to_contain_text("Waits until")
    expect(waits).to_contain_text("UTC")
    expect(waits).to_contain_text(re.compile(r"\(in [34] min\)"))
    top(page)
    page.screenshot(path=artifacts / "run-waits.png", full_page=True)
    page.goto(f"{live_server.url}/")
    working = page.locator(".stat", has_text="Runs working now")
    expect(working).to_contain_text("1 queued (1 waits for its spread start)")
    expect(page.locator(".stat", has_text="Tasks waiting")).to_contain_text("a delayed start is held by a worker")
    page.goto(f"{live_server.url}{reverse('ingestion:channel-detail', args=[channel.pk])}")
    page.get_by_role("button", name="Ingest now").click()

    expect(page).to_have_url(re.compile(rf"/ingestion/runs/{run.pk}/$"))
    assert sent == [(run.pk, 240), (run.pk, 0)], "Ingest now sends the waiting run's task again, without delay"
    expect(page.locator(".messages")).to_contain_text(f"already has run #{run.pk} queued: it starts as soon as")
    expect(waits).to_contain_text("Waiting for a free worker")
    assert IngestionRun.objects.filter(account=account).exclude(pk__lte=run.pk).count() == 0


def test_reminder_times_say_their_zone_and_a_paused_run_reads_paused(
    live_server, transactional_db, console_world, django_user_model, page, artifacts
):
    run = console_world  # a 09:00–18:00 Kuala Lumpur reminder, paused by its window yesterday; now the next morning
    Reminder.objects.filter(pk=run.reminder_id).update(schedule_crontab="0 10 * * *")
    log_in_as_operator(page, live_server.url, django_user_model)

    page.goto(f"{live_server.url}{reverse('reminders:detail', args=[run.reminder_id])}")
    next_send = page.locator(".facts div", has_text="Next send").locator("dd")
    expect(next_send).to_contain_text("10:00 +08 (Asia/Kuala_Lumpur)")
    expect(next_send).to_contain_text(re.compile(r"\(in \d+ (min|h)"))
    expect(page.locator(".eta-facts")).to_contain_text("10:00")

    page.goto(f"{live_server.url}{reverse('reminders:activity-run', args=[run.pk])}")
    meta = page.locator(".run-panel-meta").first
    expect(meta).to_contain_text("paused")
    expect(meta).not_to_contain_text("ended")
    expect(meta).to_contain_text("(Asia/Kuala_Lumpur)")
    top(page)
    page.screenshot(path=artifacts / "reminder-paused-times.png", full_page=True)


def test_a_runs_banner_and_its_skipped_list_count_the_same_sets(
    live_server, transactional_db, console_world, django_user_model, page, artifacts
):
    first = IngestionRun.objects.order_by("pk").first()
    assert first.skipped == 1
    # Retry takes the set back from that run: its row goes, and a later run tries it again.
    off_the_page_thread(lambda: ingestion_services.skipped_package_retry(skipped=SkippedPackage.objects.get()))
    log_in_as_operator(page, live_server.url, django_user_model)

    page.goto(f"{live_server.url}{reverse('ingestion:run-detail', args=[first.pk])}")

    expect(page.locator("#run-body .page-alert")).to_contain_text("1 set(s) skipped")
    section = page.locator("section", has=page.get_by_role("heading", name=re.compile(r"^Skipped")))
    expect(section.get_by_role("heading")).to_have_text("Skipped 1")
    expect(section).not_to_contain_text("Nothing skipped")
    expect(section.locator("#skipped-since")).to_have_text(
        "This run skipped 1 set; it was tried again since: Skipped packages shows where each stands."
    )
    top(page)
    page.screenshot(path=artifacts / "run-detail-skipped-since.png", full_page=True)


def test_a_refused_search_names_the_search_box_not_its_field(
    live_server, transactional_db, console_world, django_user_model, page
):
    log_in_as_operator(page, live_server.url, django_user_model)

    page.goto(f"{live_server.url}{reverse('packages:list')}?q={'dragon' * 40}")

    alert = page.locator(".page-alert[role=alert]")
    expect(alert).to_contain_text("Search: Ensure this value has at most 200 characters")
    expect(alert).not_to_contain_text("Q:")


def test_a_set_that_stays_broken_is_shown_on_its_channel(
    live_server, transactional_db, console_world, django_user_model, page, settings, artifacts
):
    SkippedPackage.objects.update(attempt_count=settings.INGEST_MAX_SKIP_ATTEMPTS)
    channel = Channel.objects.get(chat__telegram_id=SOURCE)
    log_in_as_operator(page, live_server.url, django_user_model)

    page.goto(f"{live_server.url}{reverse('ingestion:channel-detail', args=[channel.pk])}")

    expect(page.locator("#passed-over")).to_have_text(
        f"1 tried {settings.INGEST_MAX_SKIP_ATTEMPTS} times: cycles pass it over until Retry"
    )
    top(page)
    page.screenshot(path=artifacts / "channel-passed-over.png", full_page=True)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("role", ["operator", "viewer"])
def test_every_kind_of_run_says_what_it_came_to_in_the_same_words(
    live_server, transactional_db, console_world, enqueued, django_user_model, browser, artifacts, role, size
):
    """A cycle that found nothing new did nothing (not Success); a run canceled before it sent reads Canceled (not
    Partial); a cycle that skipped a set is Partial: the same badge on the list, the pills, the run page and the
    dashboard, for both roles, fitting at both sizes."""
    paused = console_world
    skipping = IngestionRun.objects.get()
    quiet = off_the_page_thread(run_cycle)

    def fire_and_cancel():
        again = reminder_fire(reminder=Reminder.objects.get(pk=paused.reminder_id), again=True)
        return reminder_run_cancel(run=again)

    canceled = off_the_page_thread(fire_and_cancel)
    context = browser.new_context(viewport=SIZES[size])
    context.set_default_timeout(10_000)
    page = context.new_page()
    _log_in_as(page, live_server.url, django_user_model, role)
    problems = []

    def look(name: str):
        problems.extend(f"{name}: {problem}" for problem in page.evaluate(MISFITS))
        top(page)
        page.screenshot(path=artifacts / f"outcomes-{role}-{size}-{name}.png", full_page=True)

    page.goto(f"{live_server.url}{reverse('ingestion:runs')}")
    expect(page.locator(f"#run-{quiet.pk} .badge")).to_have_text("Did nothing")
    expect(page.locator(f"#run-{quiet.pk} .outcome-why")).to_have_text("nothing new to ingest")
    expect(page.locator(f"#run-{skipping.pk} .badge")).to_have_text("Partial")
    expect(page.locator(".pill", has_text="Did nothing")).to_contain_text("1")
    look("ingestion-runs")
    page.locator(".pill", has_text="Did nothing").click()
    expect(page.locator(f"#run-{quiet.pk}")).to_be_visible()
    expect(page.locator(f"#run-{skipping.pk}")).to_have_count(0)
    page.goto(f"{live_server.url}{reverse('ingestion:run-detail', args=[quiet.pk])}")
    expect(page.locator("h1 .badge")).to_have_text("Did nothing")
    expect(page.locator("#run-outcome")).to_have_text("Did nothing: nothing new to ingest")
    look("ingestion-run-idle")

    page.goto(f"{live_server.url}{reverse('reminders:activity')}")
    expect(page.locator(f"#run-{canceled.pk} .badge")).to_have_text("Canceled")
    expect(page.locator(f"#run-{paused.pk} .badge")).to_have_text("Paused")
    expect(page.locator(".pill", has_text="Canceled")).to_contain_text("1")
    expect(page.locator(".pill", has_text="Partial")).to_contain_text("0")
    look("activity")
    page.goto(f"{live_server.url}{reverse('reminders:activity-run', args=[canceled.pk])}")
    expect(page.locator("h1 .badge")).to_have_text("Canceled")
    expect(page.locator(".run-panel-title")).to_contain_text(f"Run #{canceled.pk} canceled — 0 of 10 groups delivered")
    look("reminder-run-canceled")
    page.goto(f"{live_server.url}/")
    expect(page.locator(f"#attention-run-{paused.pk} .badge")).to_have_text("Paused")
    look("dashboard")

    context.close()
    assert problems == []


@pytest.mark.parametrize("size", SIZES)
def test_a_paused_runs_summary_says_the_day_its_window_closed(
    live_server, transactional_db, console_world, django_user_model, browser, artifacts, size
):
    run = console_world  # paused when its 09:00–18:00 Kuala Lumpur window closed on Wed 25 Nov; now the next morning
    context = browser.new_context(viewport=SIZES[size])
    context.set_default_timeout(10_000)
    page = context.new_page()
    log_in_as_operator(page, live_server.url, django_user_model)
    closed = "Delivery window closed at 18:00 on Wed 25 Nov (Asia/Kuala_Lumpur)."

    page.goto(f"{live_server.url}{reverse('reminders:activity-run', args=[run.pk])}")
    expect(page.locator(".run-panel-summary")).to_contain_text(closed)
    top(page)
    page.screenshot(path=artifacts / f"window-closed-{size}.png", full_page=True)
    page.goto(f"{live_server.url}/")
    expect(page.locator(f"#attention-run-{run.pk} .attention-why")).to_contain_text(closed)

    context.close()

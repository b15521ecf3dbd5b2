"""The Bot page in Chromium, as an operator and as a viewer, wide and on a phone: everything fits its card, times
say their zone, the demo bot's commands are there to copy, its console is quiet, an operator turns the bot on;
screenshots in test-artifacts/bot-*.png."""

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from accounts.models import AccountChat, Chat
from core.crypto import seal
from packages.models import BotActivity, BotDelivery, BotPerson, BotSettings, BotSubscription, Package
from tests.support import factories
from tests.support.browser import FITS, SIZES, log_in_as, off_the_page_thread, quiet_page, screenshot, team_add

pytestmark = pytest.mark.browser


def _people(django_user_model):
    team_add(django_user_model)
    now = timezone.now()
    dana = BotPerson.objects.create(
        user_id=7001, first_name="Dana", username="dana_prints", member_of="Print Club", member_checked_at=now
    )
    BotPerson.objects.create(user_id=7002, first_name="Finn", member_checked_at=now)
    long_username = BotPerson.objects.create(user_id=7003, username="a_very_long_username_of_a_maker_" + "x" * 30)
    BotActivity.objects.create(person=long_username, kind="refused", text="You can't use this bot.")
    BotSubscription.objects.create(person=dana, words="dragon bust")
    BotActivity.objects.create(person=dana, kind="command", text="/search dragon")
    long_name = "dragon-lair-terrain-presupported-75mm-remastered-v2-final.zip"
    BotActivity.objects.create(person=dana, kind="sent", text=f"{long_name} to Dana (@dana_prints)")
    BotActivity.objects.create(person=dana, kind="command", text="/search " + "dragonbustpresupported" * 6)
    BotActivity.objects.create(person=None, kind="admin", text="@stash_bot made an admin of Stashcast Archive")
    package = Package.objects.create(content_hash="e" * 64, file_name=long_name, file_size=9, archive_type="zip")
    BotDelivery.objects.create(person=dana, package=package, state="sent")
    reader = factories.account()
    chats = []
    for n, title in enumerate(("Print Club", "Resin Painters Lounge")):
        chats.append(Chat.objects.create(telegram_id=3101 + n, title=title, type="channel"))
        AccountChat.objects.create(account=reader, chat=chats[-1])
    # The demo world's bot (its token), as `make run` connects it on the sandbox.
    BotSettings.objects.create(pk=1, audience="members", token_sealed=seal("7000001:DEMO")).member_chats.set(chats[:1])


# Every element of every card inside its card (a long name or command wraps within it).
OUTSIDE_CARDS = """() => [...document.querySelectorAll('main .card')].flatMap(card => {
  const edge = card.getBoundingClientRect().right + 1;
  return [...card.querySelectorAll('*')]
    .filter(el => el.getBoundingClientRect().right > edge)
    .map(el => `${card.querySelector('h2')?.textContent}: <${el.tagName}> ${el.textContent.slice(0, 40)}`);
})"""


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("role", ["vera", "victor"])
def test_the_bot_page_fits_and_an_operator_turns_the_bot_on(
    live_server, transactional_db, django_user_model, browser, artifacts, role, size
):
    off_the_page_thread(lambda: _people(django_user_model))
    with quiet_page(browser, size=size) as page:
        log_in_as(page, live_server.url, role)
        page.goto(f"{live_server.url}/bot/")
        expect(page.get_by_role("heading", name="Bot", exact=True)).to_be_visible()
        expect(page.get_by_role("status").filter(has_text="Off")).to_be_visible()
        expect(page.get_by_text("dragon bust")).to_be_visible()
        expect(page.get_by_role("cell", name="None of the chosen chats")).to_be_visible()
        screenshot(page, artifacts / f"bot-{role}-{size}.png")
        assert page.evaluate(OUTSIDE_CARDS) == []
        assert page.evaluate(FITS)
        for section in ("bot-people-title", "bot-subscriptions-title", "bot-sent-title", "bot-activity-title"):
            times = page.locator(f"[aria-labelledby={section}] time")
            expect(times.first).to_contain_text("UTC")
        demo = page.locator("[aria-labelledby=bot-demo-title]")
        expect(demo).to_contain_text("make manage ARGS='sandbox_say 7001 @stash_bot \"/search dragon\"'")
        expect(demo).to_contain_text("make manage ARGS='sandbox_say 7002 @stash_bot /start'")
        if role == "vera":
            page.get_by_label("Bot token").fill("7000001:AAEsecret")
            page.get_by_label("The bot answers").check()
            page.get_by_label("Who may use it").select_option("members")
            page.get_by_label("Chats whose members may use it").select_option(label="Print Club")
            page.get_by_role("button", name="Save").click()
            expect(page.get_by_role("status").filter(has_text="On")).to_be_visible()
            expect(page.get_by_label("Bot token")).to_have_attribute("placeholder", "Set (from the console)")
            expect(page.get_by_label("Chats whose members may use it")).to_have_values(
                [page.get_by_role("option", name="Print Club").get_attribute("value")]
            )
        else:
            expect(page.get_by_role("button", name="Save")).to_have_count(0)
            expect(page.get_by_role("button", name="Block")).to_have_count(0)

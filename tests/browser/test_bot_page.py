"""The Bot page in Chromium, as an operator and as a viewer, wide and on a phone: it fits, its console is quiet,
an operator turns the bot on; screenshots in test-artifacts/bot-*.png."""

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from accounts.models import AccountChat, Chat
from packages.models import BotActivity, BotPerson, BotSettings, BotSubscription
from tests.support import factories
from tests.support.browser import SIZES, log_in_as, off_the_page_thread, quiet_page, screenshot, team_add

pytestmark = pytest.mark.browser


def _people(django_user_model):
    team_add(django_user_model)
    now = timezone.now()
    dana = BotPerson.objects.create(
        user_id=7001, first_name="Dana", username="dana_prints", member_of="Print Club", member_checked_at=now
    )
    BotPerson.objects.create(user_id=7002, first_name="Finn", member_checked_at=now)
    BotSubscription.objects.create(person=dana, words="dragon bust")
    BotActivity.objects.create(person=dana, kind="command", text="/search dragon")
    reader = factories.account()
    chats = []
    for n, title in enumerate(("Print Club", "Resin Painters Lounge")):
        chats.append(Chat.objects.create(telegram_id=3101 + n, title=title, type="channel"))
        AccountChat.objects.create(account=reader, chat=chats[-1])
    BotSettings.objects.create(pk=1, audience="members").member_chats.set(chats[:1])


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

"""The compose wizard: the sender it starts with, forum topics picked by name, a summary that always matches
the form; and viewers, who see the Reminders pages without a button that changes anything."""

import re

import pytest
from django.urls import reverse

from accounts.models import AccountChat, Chat, ChatTopic
from core.models import RunStatus
from reminders.models import Reminder
from reminders.services import reminder_fire
from tests.support.pages import HTMX, compose, current_step, htmx_post
from tests.support.reminders import (
    KL,
    KL_AFTER_CLOSE,
    KL_MORNING,
    KL_NEXT_MORNING,
    SENDER,
    SENDER_B,
    account,
    execute,
    groups_world,
    make_reminder,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def viewer(client, django_user_model):
    client.force_login(django_user_model.objects.create_user(username="viewer", password="s3cret-pass"))
    return client


def forum_world(*, groups: int = 2) -> dict:
    world = groups_world(groups=groups, forum=True)
    for chat in world["chats"]:
        chat["topics"] = [
            {"id": 1, "title": "General"},
            {"id": 7, "title": "News"},
            {"id": 42, "title": "Dragons"},
        ]
    return world


def test_the_wizard_starts_with_the_account_that_has_groups(operator, fanout_world):
    # Sender 0 sorts first by name, but only Sender 1 may post in the groups
    world = groups_world(groups=3, accounts=(SENDER, SENDER_B))
    fanout_world(world)
    AccountChat.objects.filter(account=account(SENDER)).update(can_post=False)

    page = operator.get(reverse("reminders:compose")).content.decode()

    chosen = re.search(r'<option value="(\d+)" selected>', page)
    assert chosen and int(chosen.group(1)) == account(SENDER_B).pk, page[:200]


def test_forum_topics_are_stored_with_the_chats_and_picked_by_name(operator, fanout_world):
    fanout_world(forum_world())
    chat = Chat.objects.get(title="Group 0000")

    assert sorted(ChatTopic.objects.filter(chat=chat).values_list("topic_id", "title")) == [
        (7, "News"),
        (42, "Dragons"),
    ], "General is the forum itself"
    html = htmx_post(operator, reverse("reminders:compose"), compose(action="goto-groups"))
    select = re.search(rf'<select class="select topic-select" name="topic-{chat.pk}".*?</select>', html, re.S).group(0)
    assert re.findall(r'<option value="(\d*)"[^>]*>([^<]+)</option>', select) == [
        ("", "General"),
        ("42", "Dragons"),
        ("7", "News"),
    ]

    html = htmx_post(
        operator,
        reverse("reminders:compose"),
        compose(step="groups", targets=[str(chat.pk)], **{f"topic-{chat.pk}": "42"}, action="goto-review"),
    )
    assert current_step(html) == "review"
    assert '<span class="chip chip--tag">Group 0000 / Dragons</span>' in html


def test_an_unknown_topic_is_refused_at_once_under_the_groups(operator, fanout_world):
    fanout_world(forum_world())
    chat = Chat.objects.get(title="Group 0000")

    html = htmx_post(
        operator,
        reverse("reminders:compose"),
        compose(step="groups", targets=[str(chat.pk)], **{f"topic-{chat.pk}": "99"}, action="goto-when"),
    )

    assert current_step(html) == "groups"
    assert "“Group 0000” has no topic 99; pick one of its topics" in html
    api_like = htmx_post(
        operator,
        reverse("reminders:compose"),
        compose(step="review", targets=[str(chat.pk)], **{f"topic-{chat.pk}": "99"}, action="save"),
    )
    assert "has no topic 99" in api_like and not Reminder.objects.exists()


def test_after_an_error_the_summary_shows_what_the_form_holds(operator, fanout_world):
    fanout_world(groups_world(groups=2))

    # the crontab never fires inside 18:00–09:00: an error, and the window stays as chosen
    html = htmx_post(
        operator,
        reverse("reminders:compose"),
        compose(step="when", window_start_hour="18", window_end_hour="9", crontab="0 12 * * *", action="goto-review"),
    )
    assert current_step(html) == "when" and "never fires inside the delivery window 18:00–09:00" in html
    assert "<dt>Window</dt><dd>18:00–09:00" in html and "09:00–09:00" not in html

    # no account chosen: an error, and the summary still counts the two parts typed
    html = htmx_post(
        operator,
        reverse("reminders:compose"),
        compose(
            account="",
            part=["0", "1"],
            **{"part-1-kind": "text", "part-1-text": "Second"},
            action="goto-groups",
        ),
    )
    assert "Choose the account that sends it." in html
    assert "<dt>Parts</dt><dd>2</dd>" in html


def test_viewers_see_no_buttons_that_change_anything(viewer, fanout_world):
    fanout_world(groups_world(groups=2))
    reminder = make_reminder()

    pages = [
        viewer.get(reverse("reminders:list")).content.decode(),
        viewer.get(reverse("reminders:detail", args=[reminder.pk])).content.decode(),
    ]

    for page in pages:
        assert 'when-idle">Send now' not in page and "Start when the window opens" not in page
        for words in ("New reminder", ">Edit<", "Delete reminder", 'role="switch"', "send-now"):
            assert words not in page, words
    assert viewer.post(reverse("reminders:send-now", args=[reminder.pk]), **HTMX).status_code == 403


def test_viewers_see_run_panels_without_resume_or_cancel(viewer, fanout_world, at):
    fanout_world(groups_world(groups=4))
    reminder = make_reminder(timezone=KL, start=9, end=18)
    at(KL_MORNING)
    run = reminder_fire(reminder=reminder)
    at(KL_MORNING, then=KL_AFTER_CLOSE, after=2)
    run = execute(run)
    at(KL_NEXT_MORNING)
    assert run.status == RunStatus.PAUSED and run.can_resume and run.can_cancel

    for url in (reverse("reminders:activity"), reverse("reminders:activity-run", args=[run.pk])):
        page = viewer.get(url).content.decode()
        assert f"Run #{run.pk}" in page
        assert "Resume</span>" not in page and "Cancel run" not in page and "Retry failed" not in page, url
    panel = viewer.get(reverse("reminders:detail", args=[reminder.pk])).content.decode()
    assert f"Run #{run.pk} paused" in panel and "Resume</span>" not in panel

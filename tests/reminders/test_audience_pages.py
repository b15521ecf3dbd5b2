"""The Audiences pages: build one by filters with a live preview of who matches, import a CSV (errors by line,
nothing imported), delete one unless reminders use it; the compose wizard's Groups step picks audiences."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from reminders.models import Audience, Reminder
from reminders.services import AudienceFilter, audience_save
from tests.support.pages import HTMX, compose, htmx_post
from tests.support.reminders import SENDER, account, group_id, groups_world, make_reminder

pytestmark = pytest.mark.django_db


def filters(**changes) -> dict:
    data = {"account": str(account(SENDER).pk), "name": "First groups", "title_contains": "000", "chat_type": ""}
    return data | changes


def test_the_preview_counts_who_matches_as_the_operator_types(operator, fanout_world):
    fanout_world(groups_world(groups=12))

    response = operator.get(reverse("reminders:audience-preview"), filters(title_contains="Group 000"), **HTMX)

    html = response.content.decode()
    assert response.status_code == 200
    assert "<strong data-match-count>10</strong> groups match" in html
    assert "Group 0009" in html and "Group 0010" not in html
    refused = operator.get(reverse("reminders:audience-preview"), filters(min_members=5, max_members=1), **HTMX)
    assert "min_members: more than max_members" in refused.content.decode()


def test_an_operator_saves_an_audience_by_filters_and_sees_its_groups(operator, fanout_world):
    fanout_world(groups_world(groups=12))

    response = operator.post(reverse("reminders:audience-new"), filters(title_contains="Group 001"))

    audience = Audience.objects.get()
    assert response.status_code == 302 and response.url == reverse("reminders:audience", args=[audience.pk])
    page = operator.get(response.url).content.decode()
    assert "“First groups” saved: 2 groups." in page and "Group 0011" in page
    operator.post(reverse("reminders:audience", args=[audience.pk]), filters(title_contains="Group 0011"))
    assert [m.chat.title for m in Audience.objects.get().members.all()] == ["Group 0011"]


def test_an_import_with_bad_lines_lists_them_and_imports_nothing(operator, fanout_world):
    fanout_world(groups_world(groups=3))
    csv = f"{group_id(0)}\n@nobody\n{group_id(1)},x\n".encode()

    response = operator.post(
        reverse("reminders:audience-import"),
        {"account": account(SENDER).pk, "name": "Imported", "file": SimpleUploadedFile("groups.csv", csv)},
    )

    page = response.content.decode()
    assert response.status_code == 400
    assert "line 2: “@nobody” is not one of" in page and "line 3: topic “x” is not a topic id" in page
    assert not Audience.objects.exists()


def test_an_audience_in_use_is_not_deleted_and_the_page_says_by_which(operator, fanout_world):
    fanout_world(groups_world(groups=3))
    audience = audience_save(account=account(SENDER), name="All", filters=AudienceFilter())
    make_reminder(name="Weekly promo", chats=[], audiences=[audience])

    response = operator.post(reverse("reminders:audience-delete", args=[audience.pk]), follow=True)

    assert "“All” is used by “Weekly promo”: remove it from them first." in response.content.decode()
    assert Audience.objects.filter(pk=audience.pk).exists()


def test_the_wizards_groups_step_picks_audiences(operator, fanout_world):
    fanout_world(groups_world(groups=3))
    audience = audience_save(account=account(SENDER), name="All groups", filters=AudienceFilter())
    page = htmx_post(operator, reverse("reminders:compose"), compose(action="goto-groups"))
    assert f'name="audiences" value="{audience.pk}"' in page and "All groups" in page

    htmx_post(operator, reverse("reminders:compose"), compose(action="save", step="review", targets=[]))
    assert not Reminder.objects.exists()  # neither a group nor an audience
    htmx_post(
        operator,
        reverse("reminders:compose"),
        compose(action="save", step="review", targets=[], audiences=[str(audience.pk)]),
    )
    assert [link.audience for link in Reminder.objects.get().audience_links.all()] == [audience]


def test_viewers_see_audiences_without_changing_them(client, django_user_model, fanout_world):
    fanout_world(groups_world(groups=3))
    audience = audience_save(account=account(SENDER), name="All", filters=AudienceFilter())
    client.force_login(django_user_model.objects.create_user(username="viewer", password="v1ew-pass"))

    listing = client.get(reverse("reminders:audiences")).content.decode()
    page = client.get(reverse("reminders:audience", args=[audience.pk])).content.decode()

    assert "All" in listing and "New audience" not in listing
    assert "Group 0002" in page and "Save audience" not in page and "Delete audience" not in page
    assert client.post(reverse("reminders:audience-new"), filters()).status_code == 403

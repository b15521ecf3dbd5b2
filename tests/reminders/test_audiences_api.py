"""The audiences API: create by filters, preview who matches, import a CSV (400 with the bad lines, nothing
imported), change, delete (409 naming the reminders using it), and reminders that target audiences."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from reminders.models import Audience
from tests.support.pages import body
from tests.support.reminders import SENDER, account, group_id

pytestmark = pytest.mark.django_db

WORLD = {
    "accounts": [{"phone": SENDER, "code": "12345"}],
    "chats": [
        {"id": group_id(0), "title": "KL Buyers", "type": "supergroup", "members": [SENDER], "other_members": 120},
        {"id": group_id(1), "title": "KL Sellers", "type": "supergroup", "members": [SENDER], "other_members": 40},
        {"id": group_id(2), "title": "Penang", "type": "supergroup", "members": [SENDER], "forum": True},
    ],
}


@pytest.fixture
def world(fanout_world):
    return fanout_world(WORLD)


def test_preview_then_create_then_change_an_audience_by_filters(api, world):
    sender = account(SENDER).pk
    preview = api.post(
        "/api/audiences/preview/", {"account": sender, "filters": {"title_contains": "kl"}}, format="json"
    )
    assert preview.status_code == 200, preview.json()
    assert preview.json()["count"] == 2
    assert [(g["title"], g["members_count"]) for g in preview.json()["groups"]] == [
        ("KL Buyers", 121),
        ("KL Sellers", 41),
    ]

    created = api.post(
        "/api/audiences/",
        {"account": sender, "name": "KL", "filters": {"title_contains": "kl", "min_members": 100}},
        format="json",
    )
    assert created.status_code == 201, created.json()
    audience = created.json()
    assert (audience["kind"], [m["title"] for m in audience["members"]]) == ("filter", ["KL Buyers"])
    assert audience["filters"]["min_members"] == 100

    changed = api.put(
        f"/api/audiences/{audience['id']}/",
        {"account": sender, "name": "KL all", "filters": {"title_contains": "kl"}},
        format="json",
    )
    assert changed.status_code == 200, changed.json()
    assert [m["title"] for m in changed.json()["members"]] == ["KL Buyers", "KL Sellers"]

    refused = api.post(
        "/api/audiences/preview/",
        {"account": sender, "filters": {"min_members": 10, "max_members": 1}},
        format="json",
    )
    assert refused.status_code == 400 and refused.json()["message"].startswith("min_members:")


def test_a_csv_import_names_the_bad_lines_and_imports_nothing(api, world):
    sender = account(SENDER).pk
    bad = b"%d\n@nobody\n%d,7\nhello\n" % (group_id(0), group_id(0))

    response = api.post(
        "/api/audiences/import/",
        {"account": sender, "name": "Imported", "file": SimpleUploadedFile("groups.csv", bad, "text/csv")},
        format="multipart",
    )

    assert response.status_code == 400
    assert [problem.split(":")[0] for problem in response.json()["problems"]] == ["line 2", "line 3", "line 4"]
    assert not Audience.objects.exists()
    good = api.post(
        "/api/audiences/import/",
        {"account": sender, "name": "Imported", "csv": f"{group_id(1)}\n-100{group_id(2)},7\n"},
        format="json",
    )
    assert good.status_code == 201, good.json()
    assert [(m["chat"], m["topic"]) for m in good.json()["members"]] == [(group_id(1), None), (group_id(2), 7)]


def test_a_reminder_targets_audiences_and_an_audience_in_use_is_not_deleted(api, world):
    sender = account(SENDER).pk
    audience = api.post(
        "/api/audiences/", {"account": sender, "name": "KL", "filters": {"title_contains": "kl"}}, format="json"
    ).json()

    created = api.post("/api/reminders/", body(targets=[], audiences=[audience["id"]], name="Weekly"), format="json")
    assert created.status_code == 201, created.json()
    assert created.json()["audiences"] == [audience["id"]]
    none = api.post("/api/reminders/", body(targets=[], name="Empty"), format="json")
    assert none.status_code == 400 and "at least one group or audience" in none.json()["message"]

    refused = api.delete(f"/api/audiences/{audience['id']}/")
    assert refused.status_code == 409
    assert refused.json()["message"] == "“KL” is used by “Weekly”: remove it from them first."
    assert api.get(f"/api/audiences/{audience['id']}/").json()["reminders"] == ["Weekly"]

    api.delete(f"/api/reminders/{created.json()['id']}/")
    assert api.delete(f"/api/audiences/{audience['id']}/").status_code == 204


def test_viewers_read_audiences_but_do_not_change_them(api, world, django_user_model):
    sender = account(SENDER).pk
    api.post("/api/audiences/", {"account": sender, "name": "KL", "filters": {}}, format="json")
    viewer = APIClient()
    viewer.force_authenticate(django_user_model.objects.create_user(username="viewer", password="v1ew-pass"))

    assert [a["name"] for a in viewer.get("/api/audiences/").json()["results"]] == ["KL"]
    refused = viewer.post("/api/audiences/", {"account": sender, "name": "Mine", "filters": {}}, format="json")
    assert refused.status_code == 403 and refused.json()["message"]

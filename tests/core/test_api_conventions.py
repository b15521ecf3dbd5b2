"""What every API list and detail read answers beside its body: ?page_size= (bounded), cursors on the big
lists, Link headers with `next` in the body, ETags with 304 on detail reads, and a schema that says so."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone
from drf_spectacular.generators import SchemaGenerator

from core.models import AuditEntry, Notification
from core.pagination import MAX_PAGE_SIZE
from ingestion.models import IngestionRun
from packages.models import Package
from tests.support.factories import account

pytestmark = pytest.mark.django_db


def entries(n: int) -> list[AuditEntry]:
    start = timezone.now() - timedelta(hours=1)
    return [
        AuditEntry.objects.create(at=start + timedelta(seconds=i), actor="ada", via="api", action=f"POST thing {i}")
        for i in range(n)
    ]


def notifications(n: int) -> None:
    for i in range(n):
        Notification.objects.create(type="t", severity="info", title=f"Note {i}", subject=f"s:{i}")


def links(response) -> dict[str, str]:
    return {rel: url for url, rel in re.findall(r'<([^>]+)>; rel="(\w+)"', response.get("Link", ""))}


def test_page_size_sets_the_page_and_links_name_the_next(api):
    notifications(5)

    first = api.get("/api/notifications/", {"page_size": 2})
    body = first.json()

    assert len(body["results"]) == 2 and body["count"] == 5
    assert links(first) == {"next": body["next"]}
    assert "page=2" in body["next"] and "page_size=2" in body["next"]
    second = api.get(body["next"])
    assert links(second) == {"next": second.json()["next"], "prev": second.json()["previous"]}
    last = api.get(second.json()["next"])
    assert len(last.json()["results"]) == 1 and set(links(last)) == {"prev"}


@pytest.mark.parametrize("value", ["0", "-3", "abc", "1.5", str(MAX_PAGE_SIZE + 1), "９"])
def test_a_page_size_out_of_bounds_is_a_400_that_says_the_bounds(api, value):
    for path in ("/api/notifications/", "/api/audit/", "/api/packages/"):
        response = api.get(path, {"page_size": value})

        assert response.status_code == 400, path
        assert response.json()["message"] == (
            f"page_size: page_size must be a whole number from 1 to {MAX_PAGE_SIZE}; got {value!r}."
        )


def test_the_largest_page_size_is_taken(api):
    notifications(3)

    assert len(api.get("/api/notifications/", {"page_size": MAX_PAGE_SIZE}).json()["results"]) == 3


def test_the_audit_trail_pages_by_cursor_and_a_new_entry_does_not_shift_it(api):
    made = entries(5)

    first = api.get("/api/audit/", {"page_size": 2, "actor": "ada"})
    body = first.json()
    assert [e["id"] for e in body["results"]] == [made[4].pk, made[3].pk]
    assert body["count"] == 5 and "cursor=" in body["next"] and "actor=ada" in body["next"]
    assert links(first) == {"next": body["next"]}

    # the newest entry, arrived while the client reads: page 2 by number would repeat made[3]
    AuditEntry.objects.create(at=timezone.now(), actor="ada", via="api", action="POST thing new")
    second = api.get(body["next"]).json()
    assert [e["id"] for e in second["results"]] == [made[2].pk, made[1].pk]
    assert "count" not in second
    back = api.get(second["previous"]).json()
    assert [e["id"] for e in back["results"]] == [made[4].pk, made[3].pk]


def test_big_lists_still_page_by_number_for_older_clients(api):
    made = entries(5)

    body = api.get("/api/audit/", {"page": 2, "page_size": 2, "actor": "ada"}).json()

    assert body["count"] == 5 and [e["id"] for e in body["results"]] == [made[2].pk, made[1].pk]
    assert "page=3" in body["next"] and "cursor" not in body["next"]


def test_packages_page_by_cursor_in_their_sort_and_by_number_when_sorted_by_name(api):
    for i, size in enumerate([30, 10, 20]):
        Package.objects.create(content_hash=f"{i:064d}", file_name=f"p{i}.zip", file_size=size, archive_type="zip")

    first = api.get("/api/packages/", {"sort": "largest", "page_size": 2}).json()
    rest = api.get(first["next"]).json()
    assert [p["file_size"] for p in first["results"] + rest["results"]] == [30, 20, 10]
    assert "cursor=" in first["next"] and "sort=largest" in first["next"]

    by_name = api.get("/api/packages/", {"sort": "name", "page_size": 2}).json()
    assert "page=2" in by_name["next"] and by_name["count"] == 3


def test_runs_lists_page_by_cursor(api):
    reader = account()
    runs = [IngestionRun.objects.create(account=reader) for _ in range(3)]

    first = api.get("/api/ingestion-runs/", {"page_size": 2}).json()
    second = api.get(first["next"]).json()

    assert [r["id"] for r in first["results"] + second["results"]] == [run.pk for run in reversed(runs)]
    assert "cursor=" in first["next"] and second["next"] is None
    assert api.get("/api/reminder-runs/", {"page_size": 2}).json() == {
        "count": 0,
        "next": None,
        "previous": None,
        "results": [],
    }


def test_a_detail_read_carries_an_etag_and_an_unchanged_one_answers_304(api):
    run = IngestionRun.objects.create(account=account())
    path = f"/api/ingestion-runs/{run.pk}/"

    first = api.get(path)
    tag = first["ETag"]
    again = api.get(path, HTTP_IF_NONE_MATCH=tag)

    assert first.status_code == 200 and tag.startswith('"')
    assert again.status_code == 304 and again.content == b""
    IngestionRun.objects.filter(pk=run.pk).update(current_channel="Models A")
    changed = api.get(path, HTTP_IF_NONE_MATCH=tag)
    assert changed.status_code == 200 and changed["ETag"] != tag
    assert changed.json()["current_channel"] == "Models A"


def test_lists_and_writes_carry_no_etag(api):
    notifications(1)

    assert not api.get("/api/notifications/").has_header("ETag")
    write = api.post("/api/notifications/read-all/")
    assert write.status_code == 200 and not write.has_header("ETag")


def test_the_schema_says_so():
    paths = SchemaGenerator().get_schema(request=None, public=True)["paths"]

    audit = paths["/api/audit/"]["get"]
    names = {parameter["name"] for parameter in audit["parameters"]}
    assert {"cursor", "page", "page_size"} <= names
    page_size = next(p for p in audit["parameters"] if p["name"] == "page_size")
    assert page_size["schema"] == {"type": "integer", "minimum": 1, "maximum": MAX_PAGE_SIZE}
    assert "Link" in audit["responses"]["200"]["headers"] and "400" in audit["responses"]
    assert "cursor" not in {parameter["name"] for parameter in paths["/api/notifications/"]["get"]["parameters"]}

    detail = paths["/api/packages/{id}/"]["get"]
    assert "ETag" in detail["responses"]["200"]["headers"] and "304" in detail["responses"]
    assert "If-None-Match" in {parameter["name"] for parameter in detail["parameters"]}

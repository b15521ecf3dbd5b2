"""No secret outside its owner's hands: what a viewer reads of the audit trail (the API, the Audit page, an object's
History) holds no invite secret, no signed link and nothing the API masks for them; and the logs hold no secret
path either."""

import logging
import os
import re

import pytest
from django.test import Client
from django.urls import reverse

from core import people
from core.audit import audit_task_finished, audit_task_started
from core.models import AuditChange, AuditEntry, Role
from packages.models import ChannelPassword
from packages.services.passwords import channel_password_add
from tests.support.factories import channel, package_with_raw_files

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def viewer(django_user_model):
    client = Client()
    client.force_login(django_user_model.objects.create_user(username="vic", password="pw-long-enough"))
    return client


def everything_a_viewer_reads(viewer, *objects_pages: str) -> str:
    """The API list and each entry, the Audit page, and the given object pages' History."""
    listed = viewer.get("/api/audit/")
    assert listed.status_code == 200
    texts = [listed.content.decode(), viewer.get(reverse("audit")).content.decode()]
    texts += [viewer.get(f"/api/audit/{entry['id']}/").content.decode() for entry in listed.json()["results"]]
    texts += [viewer.get(page).content.decode() for page in objects_pages]
    return "\n".join(texts)


def test_an_invite_secret_is_never_in_the_trail(viewer, django_user_model):
    operator = django_user_model.objects.create_user(username="olga", password="pw-long-enough")
    _invite, secret = people.invite_create(role=Role.OPERATOR, created_by=operator)
    # Someone holding the link tries it (passwords that differ): a write to /invite/<secret>/.
    Client().post(f"/invite/{secret}/", {"username": "mallory", "password": "a-long-pass-1", "password_again": "x"})

    assert secret not in str(list(AuditEntry.objects.values_list("path", "action")))
    assert secret not in everything_a_viewer_reads(viewer)


def test_a_signed_download_link_is_never_in_the_trail(operator, viewer, storage, tmp_path):
    package = package_with_raw_files(tmp_path, {"dragon.zip": os.urandom(4096)})
    page = operator.get(f"/packages/{package.pk}/download-links/", HTTP_HX_REQUEST="true").content.decode()
    [link] = re.findall(r'href="(/packages/download/[^"]+)"', page)
    token = link.split("/")[3]
    Client().get(link, HTTP_RANGE="bytes=0-99")  # a download begun leaves an entry

    assert AuditEntry.objects.filter(action__startswith="download").exists()
    assert token not in str(list(AuditEntry.objects.values_list("path", "action")))
    assert token not in everything_a_viewer_reads(viewer, f"/packages/{package.pk}/")


def test_a_caption_password_is_masked_in_the_trail_as_in_the_api(viewer, storage, tmp_path):
    package = package_with_raw_files(tmp_path, {"hills.zip": os.urandom(64)})
    audit_task_started(task_id="t-caption", task_name="ingestion.tasks.ingest")
    package.caption = "Hills set, pass: hills-v2"
    package.save()
    audit_task_finished(task_id="t-caption")

    api_caption = viewer.get(f"/api/packages/{package.pk}/").json()["caption"]
    assert "hills-v2" not in api_caption
    assert AuditChange.objects.filter(kind="packages.Package").exists()
    assert "hills-v2" not in everything_a_viewer_reads(viewer, f"/packages/{package.pk}/")


def test_a_channel_password_hint_is_never_in_the_trail(viewer):
    chat = channel("Hills").chat
    audit_task_started(task_id="t-password", task_name="ingestion.tasks.example")
    password = channel_password_add(chat_id=chat.pk, password="mountain-echo")
    audit_task_finished(task_id="t-password")

    hint = ChannelPassword.objects.get(pk=password.pk).hint
    assert AuditChange.objects.filter(kind="packages.ChannelPassword").exists()
    assert hint not in everything_a_viewer_reads(viewer)


def test_logged_request_lines_name_the_route_not_the_secret(caplog, django_user_model):
    operator = django_user_model.objects.create_user(username="olga", password="pw-long-enough")
    invite, secret = people.invite_create(role=Role.VIEWER, created_by=operator)
    people.invite_revoke(invite=invite)
    with caplog.at_level(logging.INFO):
        refused = Client().get(f"/invite/{secret}/")  # a revoked link: Django logs the refusal with its path
        forged = Client().get("/packages/download/forged-signature-abc/x.zip")
    assert refused.status_code >= 400 and forged.status_code >= 400
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "/invite/" in logged, "the refusal is still logged, by its route"
    assert secret not in logged and "forged-signature-abc" not in logged

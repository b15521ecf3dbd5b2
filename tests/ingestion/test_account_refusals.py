"""Telegram refusing an account during a cycle is that account's (accounts.sessions.account_refusal_record):
PEER_FLOOD rests it, as on every other path; a writer's refusal is never charged to the reader."""

import pytest
from django.conf import settings

from accounts.models import AuthState, TelegramAccount
from core.models import RunStatus
from packages.models import Package
from telegram.sandbox.world import World
from tests.support.ingestion import ARCHIVES, READER, WRITER, run_cycle, world

pytestmark = pytest.mark.django_db


def test_peer_flood_on_the_writers_upload_rests_the_writer_not_the_reader(ingest_world):
    ingest_world(world(messages=ARCHIVES[:2], faults=[{"op": "send", "error": "peer_flood", "account": WRITER}]))

    run = run_cycle()

    writer, reader = TelegramAccount.objects.get(phone=WRITER), TelegramAccount.objects.get(phone=READER)
    assert run.status == RunStatus.PARTIAL and "is resting" in run.error, run.error
    assert writer.auth_state == AuthState.AUTHENTICATED, "PEER_FLOOD rests an account, it does not end it"
    assert writer.resting_until is not None and "PEER_FLOOD" in writer.rest_reason
    assert reader.auth_state == AuthState.AUTHENTICATED and reader.resting_until is None
    assert not Package.objects.exists()


def test_a_writer_whose_session_is_gone_is_marked_not_the_reader(ingest_world):
    ingest_world(world(messages=ARCHIVES[:2]))
    World(settings.SANDBOX_PATH).sessions_revoke(WRITER)

    run = run_cycle()

    assert run.status == RunStatus.FAILED
    assert TelegramAccount.objects.get(phone=WRITER).auth_state == AuthState.EXPIRED
    assert TelegramAccount.objects.get(phone=READER).auth_state == AuthState.AUTHENTICATED

"""Migration 0012: channels already here keep reading their whole history; new ones start from now."""

import pytest

from accounts.models import Chat
from tests.support.migrations import latest, migrate

BEFORE = [("ingestion", "0011_run_starts_at")]
AFTER = [("ingestion", "0012_channel_rules")]


@pytest.mark.django_db(transaction=True)
def test_existing_channels_keep_their_whole_history_and_new_ones_start_from_now():
    try:
        # Only ingestion goes back; its chats are made with today's model, as accounts stays where it is.
        first, second = (Chat.objects.create(telegram_id=n, title=f"Models {n}", type="channel") for n in (1, 2))
        apps = migrate(BEFORE)
        old = apps.get_model("ingestion", "Channel").objects.create(chat_id=first.pk, is_active=True)

        apps = migrate(AFTER)
        Channel = apps.get_model("ingestion", "Channel")
        kept = Channel.objects.get(pk=old.pk)
        assert (kept.start_from, kept.take_kinds, kept.min_bytes, kept.name_pattern) == ("history", [], None, "")
        assert Channel.objects.create(chat_id=second.pk).start_from == "now"
    finally:
        migrate(latest())

"""Packages moved from ingestion's Channel and IngestionRun to accounts.Chat (issue 12): rows carried over."""

import pytest

from tests.support.migrations import latest, migrate

# Accounts go back too: its later columns (NOT NULL, no database default) would refuse the old shape's rows.
BEFORE = [
    ("packages", "0004_package_reupload"),
    ("ingestion", "0005_skip_reasons_waiting_in_flight_disk_error"),
    ("accounts", "0001_initial"),
]
AFTER = [("packages", "0006_drop_channel_links"), ("ingestion", "0007_carry_packages_over")]


def world_before(apps):
    """Two channels (one a forum with a named topic), a run, and packages and raw files in the old shape."""
    Chat = apps.get_model("accounts", "Chat")
    TelegramAccount = apps.get_model("accounts", "TelegramAccount")
    Channel = apps.get_model("ingestion", "Channel")
    AccountChannelMap = apps.get_model("ingestion", "AccountChannelMap")
    TopicProgress = apps.get_model("ingestion", "TopicProgress")
    IngestionRun = apps.get_model("ingestion", "IngestionRun")
    Package = apps.get_model("packages", "Package")
    RawFile = apps.get_model("packages", "RawFile")

    account = TelegramAccount.objects.create(phone="+15550000001")
    # A spare chat first, so that chat ids and channel ids differ.
    Chat.objects.create(telegram_id=1, title="Not a channel", type="group")
    forum_chat = Chat.objects.create(telegram_id=1001, title="Models A", type="channel", is_forum=True)
    dest_chat = Chat.objects.create(telegram_id=2001, title="Archive", type="channel")
    dest = Channel.objects.create(chat=dest_chat, is_destination=True)
    forum = Channel.objects.create(chat=forum_chat, is_active=True)
    reader = AccountChannelMap.objects.create(account=account, channel=forum)
    TopicProgress.objects.create(map=reader, topic_id=42, title="Dragons")
    run = IngestionRun.objects.create(account=account)
    common = {"file_size": 1, "archive_type": "zip", "destination_channel": dest}
    in_topic = Package.objects.create(
        content_hash="a" * 64,
        file_name="dragon.zip",
        source_channel=forum,
        source_message_id=10,
        source_topic_id=42,
        run=run,
        **common,
    )
    untitled = Package.objects.create(
        content_hash="b" * 64,
        file_name="tower.zip",
        source_channel=forum,
        source_message_id=11,
        source_topic_id=77,
        **common,
    )
    orphan = Package.objects.create(content_hash="c" * 64, file_name="lost.zip", file_size=1, archive_type="zip")
    raw = RawFile.objects.create(file_uid="900", file_name="dragon.zip", size=1, hash="d" * 64, source_channel=forum)
    return {
        "forum": forum,
        "dest": dest,
        "run": run,
        "in_topic": in_topic.pk,
        "untitled": untitled.pk,
        "orphan": orphan.pk,
        "raw": raw.pk,
    }


@pytest.mark.large  # bench-sized: migrates a database back and forth
@pytest.mark.django_db(transaction=True)
def test_packages_keep_their_chats_topic_titles_and_run_across_the_move():
    try:
        old = world_before(migrate(BEFORE))
        apps = migrate(AFTER)
        Package = apps.get_model("packages", "Package")
        RawFile = apps.get_model("packages", "RawFile")
        IngestionRun = apps.get_model("ingestion", "IngestionRun")

        in_topic = Package.objects.get(pk=old["in_topic"])
        assert (in_topic.source_chat_id, in_topic.destination_chat_id) == (old["forum"].chat_id, old["dest"].chat_id)
        assert (in_topic.source_topic_id, in_topic.source_topic_title) == (42, "Dragons")
        untitled = Package.objects.get(pk=old["untitled"])
        assert (untitled.source_topic_id, untitled.source_topic_title) == (77, ""), "no topic row: no title"
        orphan = Package.objects.get(pk=old["orphan"])
        assert (orphan.source_chat_id, orphan.destination_chat_id, orphan.source_topic_title) == (None, None, "")
        assert RawFile.objects.get(pk=old["raw"]).source_chat_id == old["forum"].chat_id
        run = IngestionRun.objects.get(pk=old["run"].pk)
        assert list(run.packages.values_list("pk", flat=True)) == [old["in_topic"]]

        # And back: the old columns are filled again from the new ones.
        apps = migrate(BEFORE)
        Package = apps.get_model("packages", "Package")
        restored = Package.objects.get(pk=old["in_topic"])
        assert (restored.source_channel_id, restored.destination_channel_id, restored.run_id) == (
            old["forum"].pk,
            old["dest"].pk,
            old["run"].pk,
        )
        assert Package.objects.get(pk=old["orphan"]).run_id is None
    finally:
        migrate(latest())

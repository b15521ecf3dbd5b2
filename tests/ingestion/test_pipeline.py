import hashlib

import pytest
from django.core.management import call_command

from core.db_thread import in_db_thread
from core.models import RunStatus
from ingestion.models import AccountChannelMap, MapRole, SkippedPackage, SkipReason, TopicProgress
from ingestion.services import skipped_package_retry, topics_sync
from packages.models import MetadataStatus, Package
from telegram.records import TopicInfo
from tests.support.ingestion import ARCHIVES, DESTINATION, READER, SOURCE, WRITER, dump, run_cycle, uploads, world

pytestmark = pytest.mark.django_db


def watermark(phone: str = READER) -> int:
    return AccountChannelMap.objects.get(
        account__phone=phone, channel__chat__telegram_id=SOURCE
    ).last_processed_message_id


def test_a_cycle_ingests_every_archive_set_once_and_indexes_it(ingest_world):
    ingest_world(world(messages=ARCHIVES))

    run = run_cycle()

    assert run.status == RunStatus.SUCCESS, run.error
    assert (run.ingested, run.skipped, run.duplicates) == (3, 0, 0)
    packages = {package.file_name: package for package in Package.objects.all()}
    assert set(packages) == {"dragon.zip", "big.7z.001", "bust.stl"}
    big = packages["big.7z.001"]
    assert big.is_multipart and big.part_count == big.volume_names.__len__() >= 3
    assert big.metadata_status == MetadataStatus.COMPLETE
    assert sorted(big.files.values_list("path", flat=True)) == ["a.stl", "b/c.stl"]
    assert packages["dragon.zip"].files.get().path == "dragon/body.stl"
    assert packages["dragon.zip"].creator == "Models A"
    posted = uploads()
    assert len(posted) == sum(len(package.dest_message_ids) for package in packages.values())
    assert [m["document"]["name"] for m in posted][:1] == ["dragon.zip"]
    source_sha = {m["document"]["name"]: m["document"]["sha256"] for m in dump(SOURCE)["messages"] if m["document"]}
    assert {m["document"]["name"]: m["document"]["sha256"] for m in posted}.items() <= source_sha.items()
    assert watermark() == max(message["id"] for message in dump(SOURCE)["messages"])


def test_the_next_cycle_finds_nothing_new_and_uploads_nothing(ingest_world):
    ingest_world(world(messages=ARCHIVES))
    run_cycle()
    before = len(uploads())

    run = run_cycle()

    assert (run.ingested, run.archives_found, run.bytes_downloaded) == (0, 0, 0)
    assert len(uploads()) == before


def test_the_same_file_in_two_channels_is_uploaded_once(ingest_world):
    same = {"name": "dragon.zip", "archive": [{"path": "dragon/body.stl", "size": 2000}]}
    twin = {
        "id": 1002,
        "title": "Models B",
        "type": "channel",
        "role": "source",
        "members": [READER],
        "messages": [{"id": 5, "document": {**same, "name": "dragon copy.zip"}}],
    }
    ingest_world(world(messages=[{"id": 11, "document": same}], more_chats=[twin]))

    run = run_cycle()

    assert (run.ingested, run.duplicates) == (1, 1)
    assert len(uploads()) == 1
    package = Package.objects.get()
    assert len(package.telegram_document_ids) == 2, "the duplicate's document id is remembered"


def test_a_set_missing_a_volume_is_skipped_and_holds_the_watermark(ingest_world, sandbox, settings):
    settings.INGEST_SET_SETTLE_SECONDS = 0  # the missing volume's arrival is taken at once
    messages = [
        {"id": 5, "document": {"name": "early.zip", "archive": [{"path": "x.stl", "size": 10}]}},
        {"id": 10, "document": {"name": "vols.part1.rar", "size": 1000, "seed": 1}},
        {"id": 12, "document": {"name": "vols.part3.rar", "size": 500, "seed": 3}},
        {"id": 14, "document": {"name": "late.zip", "archive": [{"path": "y.stl", "size": 10}]}},
    ]
    ingest_world(world(messages=messages))

    run = run_cycle()

    skipped = SkippedPackage.objects.get()
    assert (skipped.reason, skipped.message_id, skipped.part_count) == (SkipReason.MISSING_PART, 10, 2)
    assert "volume 2 missing" in skipped.error_message
    assert run.ingested == 2
    assert watermark() == 9, "the watermark never passes an unfinished message"

    call_command("sandbox_post", str(SOURCE), "--document", "vols.part2.rar", "--size", "1000", "--seed", "2")
    run = run_cycle()

    assert run.ingested == 1 and run.duplicates == 1  # late.zip is seen again and recognised
    assert not SkippedPackage.objects.exists()
    package = Package.objects.get(file_name="vols.part1.rar")
    assert package.part_count == 3
    assert package.whole_by.startswith("time (the volumes' bytes do not say whether the set is whole): no new volume")
    assert watermark() > 14


def test_a_size_limit_skip_does_not_hold_the_watermark(ingest_world, settings):
    settings.INGEST_MAX_PACKAGE_BYTES = 3000
    ingest_world(world(messages=[{"id": 7, "document": {"name": "huge.zip", "size": 5000, "seed": 1}}]))

    run_cycle()

    assert SkippedPackage.objects.get().reason == SkipReason.SIZE_LIMIT
    assert watermark() == 7


def test_retry_deletes_the_row_and_rewinds_the_watermark(ingest_world, settings):
    settings.INGEST_MAX_PACKAGE_BYTES = 3000
    ingest_world(world(messages=[{"id": 7, "document": {"name": "huge.zip", "size": 5000, "seed": 1}}]))
    run_cycle()
    settings.INGEST_MAX_PACKAGE_BYTES = 10_000

    skipped_package_retry(skipped=SkippedPackage.objects.get())

    assert watermark() == 6
    run = run_cycle()
    assert run.ingested == 1 and not SkippedPackage.objects.exists()


def test_a_short_flood_wait_on_a_download_retries_the_same_message(ingest_world):
    fault = {"op": "download", "chat": SOURCE, "message": 11, "error": "flood_wait", "seconds": 1, "times": 1}
    ingest_world(world(messages=ARCHIVES[:2], faults=[fault]))

    run = run_cycle()

    assert run.ingested == 1 and run.skipped == 0
    assert not SkippedPackage.objects.exists()


def test_a_long_flood_wait_ends_the_cycle_without_moving_past(ingest_world, settings):
    settings.INGEST_FLOOD_SLEEP_MAX_SECONDS = 5
    fault = {"op": "download", "chat": SOURCE, "message": 20, "error": "flood_wait", "seconds": 3600}
    ingest_world(world(messages=ARCHIVES, faults=[fault]))

    run = run_cycle()

    assert run.status == RunStatus.PARTIAL and "3600" in run.error
    assert watermark() < 20 and not SkippedPackage.objects.exists()
    assert run_cycle().status == RunStatus.SUCCESS
    assert Package.objects.count() == 3


def test_failed_downloads_are_retried_up_to_the_cap_then_passed(ingest_world, settings):
    settings.INGEST_MAX_SKIP_ATTEMPTS = 3
    settings.INGEST_TRANSIENT_RETRIES = 0
    fault = {"op": "download", "chat": SOURCE, "message": 11, "error": "network", "times": 100}
    ingest_world(
        world(
            messages=ARCHIVES[:2] + [{"id": 40, "document": {"name": "z.stl", "size": 10, "seed": 1}}], faults=[fault]
        )
    )

    for attempt in (1, 2, 3):
        run_cycle()
        skipped = SkippedPackage.objects.get()
        assert (skipped.reason, skipped.attempt_count) == (SkipReason.DOWNLOAD_FAILED, attempt)
        assert watermark() == (10 if attempt < 3 else 40)

    run_cycle()
    assert SkippedPackage.objects.get().attempt_count == 3, "past the cap it is no longer tried"


def test_non_premium_writer_splits_premium_does_not(ingest_world, sandbox):
    limits = {"upload_max_bytes": 100_000, "premium_upload_max_bytes": 400_000}
    accounts = [
        {"phone": READER, "first_name": "Reader A", "code": "12345"},
        {"phone": WRITER, "first_name": "Writer", "code": "12345", "premium": False},
    ]
    big = {"id": 11, "document": {"name": "big.bin.zip", "size": 250_000, "seed": 5}}
    ingest_world(world(messages=[big], accounts=accounts, limits=limits))

    run_cycle()

    package = Package.objects.get()
    posted = uploads()
    assert [m["document"]["name"] for m in posted] == ["big.bin.zip.001", "big.bin.zip.002", "big.bin.zip.003"]
    assert all(m["document"]["size"] <= 100_000 for m in posted)
    assert package.dest_part_names == [m["document"]["name"] for m in posted]
    assert _joined_sha(posted) == package.content_hash


def test_premium_writer_uploads_whole(ingest_world):
    limits = {"upload_max_bytes": 100_000, "premium_upload_max_bytes": 400_000}
    accounts = [
        {"phone": READER, "first_name": "Reader A", "code": "12345"},
        {"phone": WRITER, "first_name": "Writer", "code": "12345", "premium": True},
    ]
    ingest_world(
        world(
            messages=[{"id": 11, "document": {"name": "big.bin.zip", "size": 250_000, "seed": 5}}],
            accounts=accounts,
            limits=limits,
        )
    )

    run_cycle()

    assert [m["document"]["name"] for m in uploads()] == ["big.bin.zip"]


def _joined_sha(posted) -> str:
    """What `cat part.001 part.002 …` gives, read back from the destination."""
    import asyncio

    from accounts.models import TelegramAccount
    from core.crypto import unseal
    from telegram.gateway import open_gateway
    from telegram.records import ChatRef

    writer = TelegramAccount.objects.get(phone=WRITER)
    link = writer.chat_links.get(chat__telegram_id=DESTINATION)

    async def read():
        digest = hashlib.sha256()
        async with open_gateway(phone=writer.phone, session=unseal(writer.session_sealed)) as gateway:
            ref = ChatRef(id=DESTINATION, access_hash=link.access_hash)
            fresh = await gateway.get_messages(ref, [m["id"] for m in posted])
            for message in posted:
                async for chunk in gateway.iter_download(ref, fresh[message["id"]].document):
                    digest.update(chunk)
        return digest.hexdigest()

    return asyncio.run(read())


def test_forum_topics_give_context_and_general_goes_last(ingest_world):
    messages = [
        {"id": 3, "document": {"name": "shared.zip", "archive": [{"path": "s.stl", "size": 50}]}},
        {"id": 4, "topic": 42, "document": {"name": "shared again.zip", "archive": [{"path": "s.stl", "size": 50}]}},
        {"id": 5, "topic": 7, "document": {"name": "tile.zip", "archive": [{"path": "t.stl", "size": 60}]}},
    ]
    topics = [{"id": 1, "title": "General"}, {"id": 7, "title": "Terrain"}, {"id": 42, "title": "Dragons"}]
    ingest_world(world(messages=messages, forum=True, topics=topics))

    run = run_cycle()

    assert (run.ingested, run.duplicates) == (2, 1)
    shared = Package.objects.get(files__path="s.stl")
    assert (shared.source_topic_id, shared.creator) == (42, "Dragons"), "the named topic wins over General"
    assert shared.source_topic_title == "Dragons"
    assert Package.objects.get(file_name="tile.zip").creator == "Terrain"
    assert set(run.packages.values_list("file_name", flat=True)) == {shared.file_name, "tile.zip"}
    progress = {topic.title: topic.last_processed_message_id for topic in TopicProgress.objects.all()}
    assert progress == {"General": 5, "Terrain": 5, "Dragons": 5}, "a channel-wide scan moves every topic"

    # Telegram renames the topic: its packages show the new title, the other topic's keep theirs.
    channel_map = AccountChannelMap.objects.get(account__phone=READER, role=MapRole.READER)
    topics_sync(channel_map=channel_map, topics=[TopicInfo(id=42, title="Wyrms"), TopicInfo(id=7, title="Terrain")])
    titles = dict(Package.objects.values_list("file_name", "source_topic_title"))
    assert titles == {shared.file_name: "Wyrms", "tile.zip": "Terrain"}


def test_a_topic_with_fetch_off_is_not_scanned(ingest_world):
    messages = [{"id": 5, "topic": 7, "document": {"name": "tile.zip", "archive": [{"path": "t.stl", "size": 60}]}}]
    topics = [{"id": 1, "title": "General"}, {"id": 7, "title": "Terrain"}]
    ingest_world(world(messages=messages, forum=True, topics=topics))
    run_cycle()  # learns the topics
    Package.objects.all().delete()
    TopicProgress.objects.update(last_processed_message_id=0, fetch_enabled=False)

    run = run_cycle()

    assert run.ingested == 0 and not Package.objects.exists()


def test_without_a_destination_sets_are_skipped_for_retry(ingest_world):
    ingest_world(world(messages=ARCHIVES[:2]))
    AccountChannelMap.objects.filter(role=MapRole.WRITER).delete()

    run_cycle()

    assert SkippedPackage.objects.get().reason == SkipReason.NO_DESTINATION
    assert watermark() == 10


def test_a_cycle_whose_account_starts_resting_stops_at_the_next_set(ingest_world, monkeypatch):
    from accounts import pace
    from accounts.models import TelegramAccount
    from ingestion import taking

    ingest_world(
        world(
            messages=[
                {"id": n, "document": {"name": f"model-{n}.zip", "archive": [{"path": f"m{n}.stl", "size": 1000}]}}
                for n in (11, 12, 13)
            ]
        )
    )
    original = taking.SetStage.process
    processed = []

    async def process_then_rest(self, *args, **kwargs):
        outcome = await original(self, *args, **kwargs)
        processed.append(outcome)
        if len(processed) == 1:  # Telegram flags the account while its first set is uploaded
            reader = await in_db_thread(TelegramAccount.objects.get)(phone=READER)
            await in_db_thread(pace.account_rest)(account=reader, reason="PEER_FLOOD")
        return outcome

    monkeypatch.setattr(taking.SetStage, "process", process_then_rest)

    run = run_cycle()

    assert run.status == RunStatus.PARTIAL and run.ingested == 1
    assert "is resting; the cycle goes on after the rest" in run.error
    assert Package.objects.count() == 1, "nothing more went through the resting account"

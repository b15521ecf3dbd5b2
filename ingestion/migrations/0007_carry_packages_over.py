# Step three of four (issue 12: packages sit below ingestion): the rows carried over to packages' new columns
# and ingestion's run link. Ingestion knows both sides, so the move lives here; data only, in a migration of its
# own (PostgreSQL refuses new indexes on a table with pending trigger events).

from django.db import migrations
from django.db.models import OuterRef, Subquery, Value
from django.db.models.functions import Coalesce

BATCH = 5000


def chats_from_channels(apps, schema_editor):
    Channel = apps.get_model("ingestion", "Channel")
    TopicProgress = apps.get_model("ingestion", "TopicProgress")
    Package = apps.get_model("packages", "Package")
    RawFile = apps.get_model("packages", "RawFile")

    def chat_of(field):
        return Subquery(Channel.objects.filter(pk=OuterRef(field)).values("chat_id")[:1])

    Package.objects.filter(source_channel__isnull=False).update(source_chat_id=chat_of("source_channel_id"))
    Package.objects.filter(destination_channel__isnull=False).update(
        destination_chat_id=chat_of("destination_channel_id")
    )
    RawFile.objects.filter(source_channel__isnull=False).update(source_chat_id=chat_of("source_channel_id"))
    # The title the package's page showed: any reader's copy of the topic (they share Telegram's title).
    title = TopicProgress.objects.filter(
        map__channel_id=OuterRef("source_channel_id"), topic_id=OuterRef("source_topic_id")
    ).order_by("pk")
    Package.objects.filter(source_channel__isnull=False, source_topic_id__isnull=False).update(
        source_topic_title=Coalesce(Subquery(title.values("title")[:1]), Value(""))
    )


def channels_from_chats(apps, schema_editor):
    Channel = apps.get_model("ingestion", "Channel")
    Package = apps.get_model("packages", "Package")
    RawFile = apps.get_model("packages", "RawFile")

    def channel_of(field):
        return Subquery(Channel.objects.filter(chat_id=OuterRef(field)).values("pk")[:1])

    Package.objects.filter(source_chat__isnull=False).update(source_channel_id=channel_of("source_chat_id"))
    Package.objects.filter(destination_chat__isnull=False).update(
        destination_channel_id=channel_of("destination_chat_id")
    )
    RawFile.objects.filter(source_chat__isnull=False).update(source_channel_id=channel_of("source_chat_id"))


def links_from_package_runs(apps, schema_editor):
    Package = apps.get_model("packages", "Package")
    IngestionRun = apps.get_model("ingestion", "IngestionRun")
    Link = IngestionRun.packages.through
    rows = Package.objects.filter(run__isnull=False).values_list("pk", "run_id").order_by("pk")
    batch = []
    for package_id, run_id in rows.iterator(chunk_size=BATCH):
        batch.append(Link(ingestionrun_id=run_id, package_id=package_id))
        if len(batch) == BATCH:
            Link.objects.bulk_create(batch, ignore_conflicts=True)
            batch = []
    Link.objects.bulk_create(batch, ignore_conflicts=True)


def package_runs_from_links(apps, schema_editor):
    Package = apps.get_model("packages", "Package")
    IngestionRun = apps.get_model("ingestion", "IngestionRun")
    Link = IngestionRun.packages.through
    first_run = Link.objects.filter(package_id=OuterRef("pk")).order_by("ingestionrun_id").values("ingestionrun_id")
    Package.objects.update(run_id=Subquery(first_run[:1]))


def forwards(apps, schema_editor):
    chats_from_channels(apps, schema_editor)
    links_from_package_runs(apps, schema_editor)


def backwards(apps, schema_editor):
    channels_from_chats(apps, schema_editor)
    package_runs_from_links(apps, schema_editor)


class Migration(migrations.Migration):
    dependencies = [
        ("ingestion", "0006_run_packages"),
        ("packages", "0005_chats_not_channels"),
    ]

    operations = [migrations.RunPython(forwards, backwards, elidable=True)]

# Packages point at accounts.Chat, not at ingestion's Channel (issue 12: packages sit below ingestion).
# Step one of four: the new columns (ingestion 0006 adds the run link, ingestion 0007 carries the rows over,
# packages 0006 drops the old columns).

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0001_initial"),
        ("ingestion", "0005_skip_reasons_waiting_in_flight_disk_error"),
        ("packages", "0004_package_reupload"),
    ]

    operations = [
        # Frees the name `packages` on IngestionRun for ingestion 0006's link, until packages 0006 drops `run`.
        migrations.AlterField(
            model_name="package",
            name="run",
            field=models.ForeignKey(
                null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="+", to="ingestion.ingestionrun"
            ),
        ),
        migrations.AddField(
            model_name="package",
            name="source_chat",
            field=models.ForeignKey(
                null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="packages", to="accounts.chat"
            ),
        ),
        migrations.AddField(
            model_name="package",
            name="destination_chat",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="destination_packages",
                to="accounts.chat",
            ),
        ),
        migrations.AddField(
            model_name="package",
            name="source_topic_title",
            field=models.CharField(blank=True, max_length=255),
        ),
        migrations.AddField(
            model_name="rawfile",
            name="source_chat",
            field=models.ForeignKey(
                null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="raw_files", to="accounts.chat"
            ),
        ),
    ]

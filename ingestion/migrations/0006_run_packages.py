# The run ↔ package link moves to ingestion (issue 12: packages sit below ingestion): step two of four.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("ingestion", "0005_skip_reasons_waiting_in_flight_disk_error"),
        ("packages", "0005_chats_not_channels"),
    ]

    operations = [
        migrations.AddField(
            model_name="ingestionrun",
            name="packages",
            field=models.ManyToManyField(blank=True, related_name="ingestion_runs", to="packages.package"),
        ),
    ]

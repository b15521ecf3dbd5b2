# Step four of four (after ingestion 0007): the columns that pointed up at ingestion go.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("ingestion", "0007_carry_packages_over"),
        ("packages", "0005_chats_not_channels"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="package",
            name="unique_package_source_message",
        ),
        migrations.RemoveField(
            model_name="package",
            name="source_channel",
        ),
        migrations.RemoveField(
            model_name="package",
            name="destination_channel",
        ),
        migrations.RemoveField(
            model_name="package",
            name="run",
        ),
        migrations.RemoveField(
            model_name="rawfile",
            name="source_channel",
        ),
        migrations.AddConstraint(
            model_name="package",
            constraint=models.UniqueConstraint(
                fields=("source_chat", "source_message_id"), name="unique_package_source_message"
            ),
        ),
    ]

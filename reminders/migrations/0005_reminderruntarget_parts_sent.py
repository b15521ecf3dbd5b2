from django.db import migrations, models
from django.db.models import F, Func


def sent_targets_sent_every_part(apps, schema_editor):
    # Before per-part progress, a `sent` target was marked so only once all its parts had gone out.
    ReminderRunTarget = apps.get_model("reminders", "ReminderRunTarget")
    ReminderRunTarget.objects.filter(status="sent").update(
        parts_sent=Func(F("random_ids"), function="cardinality", output_field=models.PositiveSmallIntegerField())
    )


class Migration(migrations.Migration):
    dependencies = [
        ("reminders", "0004_media_kind"),
    ]

    operations = [
        migrations.AddField(
            model_name="reminderruntarget",
            name="parts_sent",
            field=models.PositiveSmallIntegerField(default=0),
        ),
        migrations.RunPython(sent_targets_sent_every_part, migrations.RunPython.noop),
    ]

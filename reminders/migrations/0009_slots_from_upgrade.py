from datetime import timedelta

from django.db import migrations
from django.utils import timezone

# Runs fired before slots were recorded that a beat restarted by this upgrade could fire again.
RECENT = timedelta(days=2)


def slots_from_upgrade(apps, schema_editor):
    """Recent scheduled runs get the slot they served, so a beat restarted by the upgrade finds them. (The catch-up
    starts at the upgrade: 0008 gave every reminder's schedule_since the moment it ran.)"""
    from reminders.schedule import slot_due

    Reminder = apps.get_model("reminders", "Reminder")
    ReminderRun = apps.get_model("reminders", "ReminderRun")
    now = timezone.now()
    for reminder in Reminder.objects.exclude(schedule_crontab="", schedule_at__isnull=True):
        runs = ReminderRun.objects.filter(
            reminder=reminder, trigger="schedule", slot__isnull=True, fired_at__gte=now - RECENT
        ).order_by("fired_at", "pk")
        taken = set()
        for run in runs:
            try:
                slot = slot_due(reminder, run.fired_at)
            except ValueError:  # a zone or crontab no longer valid: nothing to match
                break
            if slot is not None and slot not in taken:  # a second run of one slot keeps no slot
                taken.add(slot)
                run.slot = slot
                run.save(update_fields=["slot"])


class Migration(migrations.Migration):
    dependencies = [
        ("reminders", "0008_reminderrun_slot"),
    ]

    operations = [
        migrations.RunPython(slots_from_upgrade, migrations.RunPython.noop),
    ]

"""Audit entries say what was done in words, and keep a route instead of a path: entries written before hold
paths with secrets (an invite link's, a signed download link's), a channel password's hint and raw captions. Those
are scrubbed here: what a viewer reads of the trail never held more than the API shows them."""

import re

from django.db import migrations, models
from django.db.models import Q

HIDDEN = "(hidden)"
SECRET_PATHS = [
    (re.compile(r"^/invite/[^/]+/"), "/invite/:token/"),
    (re.compile(r"^/packages/download/[^/]+/[^/]*$"), "/packages/download/:token/:name"),
]
CAPTION_FIELDS = ("caption", "volume_captions")


def scrub(apps, schema_editor):
    AuditEntry = apps.get_model("core", "AuditEntry")
    AuditChange = apps.get_model("core", "AuditChange")
    for entry in AuditEntry.objects.filter(Q(path__startswith="/invite/") | Q(path__startswith="/packages/download/")):
        for pattern, route in SECRET_PATHS:
            entry.path = pattern.sub(route, entry.path)
        entry.save(update_fields=["path"])
    # An action that named no route held the raw path.
    AuditEntry.objects.filter(action__regex=r"^[A-Z]+ /").update(
        action=models.Func(
            models.F("action"), models.Value(r" /.*$"), models.Value(" (no such page)"), function="regexp_replace"
        )
    )
    for change in AuditChange.objects.filter(kind="packages.ChannelPassword"):
        change.fields = {
            name: [HIDDEN if value else value for value in values] if name == "hint" else values
            for name, values in change.fields.items()
        }
        change.object_repr = f"channel password #{change.object_id}"
        change.save(update_fields=["fields", "object_repr"])
    for change in AuditChange.objects.filter(kind__startswith="packages."):
        if any(name in change.fields for name in CAPTION_FIELDS):
            change.fields = {
                name: [HIDDEN if value else value for value in values] if name in CAPTION_FIELDS else values
                for name, values in change.fields.items()
            }
            change.save(update_fields=["fields"])


class Migration(migrations.Migration):
    dependencies = [("core", "0008_invites")]

    operations = [
        migrations.AddField(
            model_name="auditentry",
            name="summary",
            field=models.CharField(blank=True, max_length=500),
        ),
        migrations.AlterField(
            model_name="auditentry",
            name="via",
            field=models.CharField(
                choices=[("page", "Page"), ("api", "API"), ("command", "Command"), ("task", "Task"), ("bot", "Bot")],
                max_length=10,
            ),
        ),
        migrations.RunPython(scrub, migrations.RunPython.noop),
    ]

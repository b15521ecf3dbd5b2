"""Named API tokens, kept as hashes; DRF's plain authtoken keys become named tokens and their table goes.

Each old key becomes a write token named "migrated" (the scripts using it keep working) that expires after
API_TOKEN_DEFAULT_DAYS; then authtoken's table, which holds the keys in clear, is dropped with its migration
records, so neither the database nor a backup taken after this holds a working key in clear.
"""

import hashlib
from datetime import timedelta

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

OLD_TABLE = "authtoken_token"


def authtoken_keys_migrate(apps, schema_editor):
    connection = schema_editor.connection
    if OLD_TABLE not in connection.introspection.table_names():
        return
    api_token = apps.get_model("core", "ApiToken")
    now = django.utils.timezone.now()
    expires_at = now + timedelta(days=settings.API_TOKEN_DEFAULT_DAYS)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT key, user_id, created FROM {OLD_TABLE}")
        rows = cursor.fetchall()
    api_token.objects.bulk_create(
        api_token(
            owner_id=user_id,
            name="migrated",
            scope="write",
            prefix=key[:8],
            secret_hash=hashlib.sha256(key.encode()).hexdigest(),
            created_at=created,
            expires_at=expires_at,
        )
        for key, user_id, created in rows
    )
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE {OLD_TABLE}")
        cursor.execute("DELETE FROM django_migrations WHERE app = 'authtoken'")


class Migration(migrations.Migration):
    dependencies = [
        ("core", "0006_audit_trail"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="ApiToken",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.CharField(max_length=100)),
                (
                    "scope",
                    models.CharField(
                        choices=[("read", "Read"), ("write", "Read and write")], default="read", max_length=5
                    ),
                ),
                ("prefix", models.CharField(max_length=12)),
                ("secret_hash", models.CharField(max_length=64, unique=True)),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("expires_at", models.DateTimeField()),
                ("last_used_at", models.DateTimeField(blank=True, null=True)),
                ("revoked_at", models.DateTimeField(blank=True, null=True)),
                (
                    "owner",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="api_tokens",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={"ordering": ["-created_at", "-pk"]},
        ),
        migrations.RunPython(authtoken_keys_migrate, migrations.RunPython.noop),
    ]

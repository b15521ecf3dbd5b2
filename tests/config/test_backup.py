"""`make backup` / `make restore`: a dump of a live database, the media and the secrets comes back whole."""

import stat
import subprocess
import sys

import psycopg
import pytest
from django.conf import settings

from config import backup
from config.devstack import ROOT
from config.storage import object_store_parse

pytestmark = pytest.mark.processes


@pytest.fixture
def scratch_database():
    """A database of its own on the tests' server, dropped afterwards."""
    database = settings.DATABASES["default"]
    server = f"postgres://{database['USER']}:{database['PASSWORD'] or ''}@{database['HOST']}:{database['PORT']}"
    names = ["stashcast_backup_a", "stashcast_backup_b"]
    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        for name in names:
            conn.execute(f"DROP DATABASE IF EXISTS {name}")
            conn.execute(f"CREATE DATABASE {name}")
    yield [f"{server}/{name}" for name in names]
    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        for name in names:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_backup_then_restore_round_trip(tmp_path, scratch_database):
    source, target = scratch_database
    with psycopg.connect(source) as conn:
        conn.execute("CREATE TABLE reminder (id int PRIMARY KEY, name text, media text)")
        conn.execute("INSERT INTO reminder VALUES (1, 'Black Friday ✓', 'reminders/media/promo.png')")
    media = tmp_path / "media"
    (media / "reminders" / "media").mkdir(parents=True)
    (media / "reminders" / "media" / "promo.png").write_bytes(b"\x89PNG picture")
    (media / "raw" / "ab").mkdir(parents=True)
    (media / "raw" / "ab" / "dragon.zip").write_bytes(b"refetchable archive")
    secret_env = tmp_path / "var" / "secret.env"
    secret_env.parent.mkdir()
    secret_env.write_text("STASHCAST_SESSION_KEYS=old-key\n")

    folder, secrets = backup.backup_create(
        database_url=source, media_root=media, secret_env=secret_env, into=tmp_path / "backups"
    )

    assert sorted(path.name for path in folder.iterdir()) == ["database.dump", "manifest.json", "media.tar"]
    assert secrets.parent == folder.parent and secrets.name == f"{folder.name}.secret.env", "stored apart"
    assert stat.S_IMODE(secrets.stat().st_mode) == 0o600 and stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert "old-key" not in (folder / "manifest.json").read_text()

    restored_media = tmp_path / "restored-media"
    new_secret_env = tmp_path / "new-var" / "secret.env"
    new_secret_env.parent.mkdir()
    new_secret_env.write_text("STASHCAST_SESSION_KEYS=another-key\n")
    backup.backup_restore(
        folder=folder, database_url=target, media_root=restored_media, secret_env=new_secret_env, secrets=secrets
    )

    with psycopg.connect(target) as conn:
        assert conn.execute("SELECT id, name, media FROM reminder").fetchall() == [
            (1, "Black Friday ✓", "reminders/media/promo.png")
        ]
    assert (restored_media / "reminders" / "media" / "promo.png").read_bytes() == b"\x89PNG picture"
    assert not (restored_media / "raw").exists(), "raw files are left out unless asked for"
    assert new_secret_env.read_text() == "STASHCAST_SESSION_KEYS=old-key\n"
    assert new_secret_env.with_name("secret.env.before-restore").read_text() == "STASHCAST_SESSION_KEYS=another-key\n"

    # Restoring again over the same database replaces, never duplicates.
    backup.backup_restore(folder=folder, database_url=target, media_root=restored_media, secret_env=new_secret_env)
    with psycopg.connect(target) as conn:
        assert conn.execute("SELECT count(*) FROM reminder").fetchone() == (1,)


def test_raw_files_are_kept_when_asked_for(tmp_path, scratch_database):
    media = tmp_path / "media"
    (media / "raw").mkdir(parents=True)
    (media / "raw" / "dragon.zip").write_bytes(b"archive")

    folder, secrets = backup.backup_create(
        database_url=scratch_database[0],
        media_root=media,
        secret_env=tmp_path / "none.env",
        into=tmp_path,
        with_raw=True,
    )

    assert secrets is None
    backup.backup_restore(
        folder=folder, database_url=scratch_database[1], media_root=tmp_path / "out", secret_env=tmp_path / "s.env"
    )
    assert (tmp_path / "out" / "raw" / "dragon.zip").read_bytes() == b"archive"


def test_media_in_an_object_store_are_backed_up_and_restored_object_by_object(tmp_path, scratch_database, object_store):
    source = object_store_parse(object_store)
    client = source.client()
    client.put_object(Bucket=source.bucket, Key="reminders/media/promo.png", Body=b"\x89PNG picture")
    client.put_object(Bucket=source.bucket, Key="raw/ab/dragon.zip", Body=b"refetchable archive")

    folder, _ = backup.backup_create(
        database_url=scratch_database[0],
        media_root=tmp_path / "unused",
        secret_env=tmp_path / "none.env",
        into=tmp_path,
        store=source,
    )
    with_raw, _ = backup.backup_create(
        database_url=scratch_database[0],
        media_root=tmp_path / "unused",
        secret_env=tmp_path / "none.env",
        into=tmp_path / "with-raw",
        with_raw=True,
        store=source,
    )

    assert f"bucket {source.bucket}" in (folder / "manifest.json").read_text()
    target = object_store_parse(object_store.replace("/test-", "/restored-"))
    client.create_bucket(Bucket=target.bucket)
    backup.backup_restore(
        folder=folder,
        database_url=scratch_database[1],
        media_root=tmp_path / "out",
        secret_env=tmp_path / "s.env",
        store=target,
    )
    assert [item["Key"] for item in client.list_objects_v2(Bucket=target.bucket)["Contents"]] == [
        "reminders/media/promo.png"
    ], "raw files only with --with-raw"
    backup.backup_restore(
        folder=with_raw,
        database_url=scratch_database[1],
        media_root=tmp_path / "out",
        secret_env=tmp_path / "s.env",
        store=target,
    )
    assert client.get_object(Bucket=target.bucket, Key="raw/ab/dragon.zip")["Body"].read() == b"refetchable archive"
    assert not (tmp_path / "out").exists(), "nothing went to the local disk"


def test_a_folder_that_is_not_a_backup_is_refused(tmp_path):
    with pytest.raises(backup.BackupError, match="has no database.dump"):
        backup.backup_restore(
            folder=tmp_path, database_url="postgres://x/y", media_root=tmp_path, secret_env=tmp_path / "s"
        )


def test_restore_refuses_while_the_stack_runs(tmp_path, capsys):
    env = {"MEDIA_ROOT": str(tmp_path / "media"), "DATABASE_URL": "postgres://x/y"}

    assert backup.main(["restore", str(tmp_path)], env=env, var=tmp_path, stack_running=True) == 1
    assert "Stop `make run` first" in capsys.readouterr().err


def test_make_backup_and_restore_are_wired(tmp_path):
    makefile = (ROOT / "Makefile").read_text()
    assert "config.devstack backup" in makefile and "config.devstack restore" in makefile
    done = subprocess.run([sys.executable, "-m", "config.devstack"], cwd=ROOT, capture_output=True, text=True)
    assert "backup [--with-raw] [FOLDER]" in done.stderr

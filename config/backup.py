"""`make backup` and `make restore`: the database, the media and the secrets of one Stashcast.

A backup is a folder `backups/stashcast-<UTC time>/` with

    database.dump   pg_dump's custom format: one consistent snapshot, taken while the stack runs
    media.tar       the uploaded media (reminder pictures and files); raw files only with --with-raw; read from
                    the local disk (MEDIA_ROOT) or from the object store (STORAGE_URL), object by object
    manifest.json   what was dumped, when, from which database

and, apart from it, `backups/stashcast-<UTC time>.secret.env`: var/secret.env, whose keys decrypt every
Telegram session in the dump. Whoever holds both holds the accounts, so store the secrets somewhere else
(a password manager), never next to the backup.

pg_dump and pg_restore are the embedded PostgreSQL's (the pgserver wheel), or the ones on PATH.
"""

import json
import shutil
import subprocess
import sys
import tarfile
import warnings
from datetime import UTC, datetime
from pathlib import Path

from botocore.exceptions import BotoCoreError, ClientError
from django.core.exceptions import ImproperlyConfigured

from config.storage import ObjectStore, object_store_parse

RAW_FOLDER = "raw"  # packages.RawFile objects: kept for a while, refetchable from Telegram


class BackupError(Exception):
    pass


def _pg_tool(name: str) -> str:
    warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR")
    try:
        from pgserver._commands import POSTGRES_BIN_PATH

        return str(POSTGRES_BIN_PATH / name)
    except ImportError:
        found = shutil.which(name)
        if found is None:
            raise BackupError(f"{name} is needed: install the PostgreSQL client tools.") from None
        return found


def _run(args: list[str]) -> None:
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise BackupError(f"{Path(args[0]).name} failed (exit {done.returncode}): {done.stderr.strip()[-2000:]}")


def backup_create(
    *,
    database_url: str,
    media_root: Path,
    secret_env: Path,
    into: Path,
    with_raw: bool = False,
    store: ObjectStore | None = None,
) -> tuple[Path, Path | None]:
    """Write a backup folder and, apart, the secrets; returns both paths."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    folder = into / f"stashcast-{stamp}"
    folder.mkdir(parents=True)
    folder.chmod(0o700)
    _run([_pg_tool("pg_dump"), "--format=custom", "--no-owner", f"--file={folder / 'database.dump'}", database_url])
    with tarfile.open(folder / "media.tar", "w") as archive:
        if store is None:
            media_files = _disk_to_tar(archive, media_root, with_raw=with_raw)
        else:
            media_files = _store_to_tar(archive, store, with_raw=with_raw)
    secrets_path = None
    if secret_env.exists():
        secrets_path = into / f"stashcast-{stamp}.secret.env"
        shutil.copyfile(secret_env, secrets_path)
        secrets_path.chmod(0o600)
    manifest = {
        "created_at": stamp,
        "database": database_url.rsplit("@", 1)[-1],  # host/name, never the password
        "media_files": media_files,
        "media_from": f"bucket {store.bucket} at {store.endpoint_url}" if store else "the local disk",
        "raw_files_included": with_raw,
        "secrets": secrets_path.name if secrets_path else None,
    }
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return folder, secrets_path


def _disk_to_tar(archive: tarfile.TarFile, media_root: Path, *, with_raw: bool) -> int:
    count = 0
    if media_root.is_dir():
        for path in sorted(media_root.rglob("*")):
            relative = path.relative_to(media_root)
            if not path.is_file() or (not with_raw and relative.parts[0] == RAW_FOLDER):
                continue
            archive.add(path, arcname=str(relative))
            count += 1
    return count


def _store_to_tar(archive: tarfile.TarFile, store: ObjectStore, *, with_raw: bool) -> int:
    """Every object under the store's prefix, streamed into the archive (never a whole object in memory)."""
    client, prefix, count = store.client(), f"{store.prefix}/" if store.prefix else "", 0
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=store.bucket, Prefix=prefix):
        for item in page.get("Contents", []):
            relative = item["Key"][len(prefix) :]
            if not with_raw and relative.split("/", 1)[0] == RAW_FOLDER:
                continue
            info = tarfile.TarInfo(relative)
            info.size, info.mtime = item["Size"], int(item["LastModified"].timestamp())
            body = client.get_object(Bucket=store.bucket, Key=item["Key"])["Body"]
            try:
                archive.addfile(info, body)
            finally:
                body.close()
            count += 1
    return count


def _tar_to_store(archive: tarfile.TarFile, store: ObjectStore) -> None:
    client, prefix = store.client(), f"{store.prefix}/" if store.prefix else ""
    for member in archive:
        member = tarfile.data_filter(member, "/")  # refuses absolute paths, `..` and links out, as extractall does
        if member.isfile():
            client.upload_fileobj(archive.extractfile(member), store.bucket, prefix + member.name)


def backup_restore(
    *,
    folder: Path,
    database_url: str,
    media_root: Path,
    secret_env: Path,
    secrets: Path | None = None,
    store: ObjectStore | None = None,
) -> None:
    """Replace the database's contents and the media with the backup's; the secrets too when given.

    The stack must be stopped: a worker writing meanwhile would mix two states.
    """
    dump = folder / "database.dump"
    if not dump.is_file():
        raise BackupError(f"{folder} has no database.dump: is it a folder made by `make backup`?")
    _run(
        [
            _pg_tool("pg_restore"),
            "--clean",
            "--if-exists",
            "--no-owner",
            "--single-transaction",
            "--exit-on-error",
            f"--dbname={database_url}",
            str(dump),
        ]
    )
    media_tar = folder / "media.tar"
    if media_tar.is_file():
        with tarfile.open(media_tar) as archive:
            if store is None:
                media_root.mkdir(parents=True, exist_ok=True)
                archive.extractall(media_root, filter="data")
            else:
                _tar_to_store(archive, store)
    if secrets is not None:
        if secret_env.exists() and secret_env.read_bytes() != secrets.read_bytes():
            kept = secret_env.with_name(f"{secret_env.name}.before-restore")
            shutil.copyfile(secret_env, kept)
            kept.chmod(0o600)
        secret_env.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(secrets, secret_env)
        secret_env.chmod(0o600)


def main(argv: list[str], *, env: dict[str, str], var: Path, stack_running: bool) -> int:
    """`backup [--with-raw] [FOLDER]` or `restore BACKUP_FOLDER [SECRETS_FILE]`, with the stack's env."""
    command, args = argv[0], argv[1:]
    media_root = Path(env["MEDIA_ROOT"])
    secret_env = var / "secret.env"
    try:
        store = object_store_parse(env["STORAGE_URL"]) if env.get("STORAGE_URL") else None
        if command == "backup":
            with_raw = "--with-raw" in args
            paths = [arg for arg in args if arg != "--with-raw"]
            into = Path(paths[0]) if paths else Path(env.get("BACKUP_DIR", "backups"))
            folder, secrets = backup_create(
                database_url=env["DATABASE_URL"],
                media_root=media_root,
                secret_env=secret_env,
                into=into,
                with_raw=with_raw,
                store=store,
            )
            print(f"  Backup: {folder}")
            if secrets is not None:
                print(
                    f"  Secrets: {secrets}\n  Move the secrets file somewhere else than the backup (a password "
                    "manager): with both, anyone can use every Telegram account in it."
                )
            return 0
        if not args:
            print("make restore ARGS='BACKUP_FOLDER [SECRETS_FILE]'", file=sys.stderr)
            return 2
        if stack_running:
            raise BackupError("Stop `make run` first (Ctrl-C): a restore replaces the database it is using.")
        secrets = Path(args[1]) if len(args) > 1 else None
        backup_restore(
            folder=Path(args[0]),
            database_url=env["DATABASE_URL"],
            media_root=media_root,
            secret_env=secret_env,
            secrets=secrets,
            store=store,
        )
        print(f"  Restored {args[0]}" + (f" with the secrets of {secrets}" if secrets else "") + ".")
        if secrets is None:
            print("  The secrets were kept as they are: sessions saved with other keys need the backup's secrets.")
        return 0
    except (BackupError, OSError, tarfile.TarError, ImproperlyConfigured, BotoCoreError, ClientError) as exc:
        print(f"\n{exc}", file=sys.stderr)
        return 1

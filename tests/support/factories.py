"""Ready-made rows for tests that do not need a whole sandbox world."""

import hashlib
import itertools
from pathlib import Path

from accounts.models import AccountChat, AuthState, Chat, TelegramAccount
from ingestion.models import Channel
from packages.models import Package
from packages.services import raw_file_record

_ids = itertools.count(5000)


def account(phone: str = "", **fields) -> TelegramAccount:
    defaults = {"auth_state": AuthState.AUTHENTICATED, "display_name": "Reader"}
    return TelegramAccount.objects.create(phone=phone or f"+1555{next(_ids):07d}", **{**defaults, **fields})


def channel(title: str = "Models A", *, member: TelegramAccount | None = None, **fields) -> Channel:
    chat = Chat.objects.create(telegram_id=next(_ids), title=title, type=fields.pop("type", "channel"))
    if member is not None:
        AccountChat.objects.create(account=member, chat=chat, access_hash=1)
    return Channel.objects.create(chat=chat, **fields)


def work_queued(callbacks: list) -> list:
    """The on-commit callbacks that queue work: the audit trail's own records (core.audit, core.audit_changes) left
    out."""
    return [callback for callback in callbacks if callback.__module__ not in ("core.audit", "core.audit_changes")]


def package_with_raw_files(folder, volumes: dict[str, bytes], *, name: str = "") -> Package:
    """A package whose raw files (one, or each volume in order) are kept in the storage as ingestion keeps them;
    `folder` holds the staged copies."""
    names = list(volumes)
    package = Package.objects.create(
        content_hash=hashlib.sha256("".join(names).encode()).hexdigest(),
        file_name=name or names[0],
        file_size=sum(len(data) for data in volumes.values()),
        archive_type="7z" if names[0].endswith((".7z", ".001")) else "zip",
        is_multipart=len(names) > 1,
        part_count=len(names),
        volume_names=names if len(names) > 1 else [],
    )
    for data_name, data in volumes.items():
        staged = Path(folder) / "staged" / data_name
        staged.parent.mkdir(parents=True, exist_ok=True)
        staged.write_bytes(data)
        raw = raw_file_record(
            file_uid=str(next(_ids)),
            file_name=data_name,
            size=len(data),
            sha256=hashlib.sha256(data).hexdigest(),
            staged_path=staged,
            chat=None,
            expiration_days=None,
        )
        package.raw_files.add(raw)
    return package

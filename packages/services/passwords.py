"""Archive passwords: the ones an operator keeps per source channel (sealed like sessions, core.crypto), and the
candidates a listing tries on an archive that needs one: those its captions name first, then the channel's."""

import logging

from cryptography.fernet import InvalidToken
from django.core.exceptions import ValidationError
from django.db import transaction

from core.crypto import SealBroken, reseal, seal, unseal
from packages.models import ChannelPassword, Package, PasswordSource
from packages.passwords import caption_passwords

logger = logging.getLogger(__name__)

MAX_PASSWORD_CHARS = 200
MAX_CHANNEL_PASSWORDS = 50


def password_hint(password: str) -> str:
    """Enough to tell passwords apart on a page, never enough to read one: its first and last characters."""
    if len(password) <= 4:
        return "•" * len(password)
    return f"{password[0]}•••{password[-1]} ({len(password)})"


def channel_password_add(*, chat_id: int, password: str) -> ChannelPassword:
    password = password.strip()
    if not password:
        raise ValidationError({"password": "Type the password to add."})
    if len(password) > MAX_PASSWORD_CHARS:
        raise ValidationError({"password": f"A password is at most {MAX_PASSWORD_CHARS} characters."})
    with transaction.atomic():
        kept = list(ChannelPassword.objects.select_for_update().filter(chat_id=chat_id))
        if any(_opened(row) == password for row in kept):
            raise ValidationError({"password": "This channel has that password already."})
        if len(kept) >= MAX_CHANNEL_PASSWORDS:
            raise ValidationError(
                {"password": f"A channel keeps at most {MAX_CHANNEL_PASSWORDS} passwords; remove one first."}
            )
        return ChannelPassword.objects.create(
            chat_id=chat_id, password_sealed=seal(password), hint=password_hint(password)
        )


def channel_password_remove(*, chat_id: int, password_id: int) -> None:
    removed, _ = ChannelPassword.objects.filter(chat_id=chat_id, pk=password_id).delete()
    if not removed:
        raise ValidationError({"password": "That password is not one of this channel's (removed already?)."})


def archive_password_candidates(*, captions: list[str], chat_id: int | None) -> list[tuple[str, str]]:
    """(password, where it came from) to try, in order, each once: the captions' then the channel's."""
    candidates: list[tuple[str, str]] = []
    seen = set()
    found = [(password, PasswordSource.CAPTION) for caption in captions for password in caption_passwords(caption)]
    kept = ChannelPassword.objects.filter(chat_id=chat_id) if chat_id is not None else []
    found += [(opened, PasswordSource.CHANNEL) for row in kept if (opened := _opened(row)) is not None]
    for password, source in found:
        if password not in seen:
            seen.add(password)
            candidates.append((password, str(source)))
    return candidates


def archive_passwords_reseal() -> int:
    """Re-encrypt every kept archive password (the channels' and those that opened a package) with the newest key
    (key rotation), all or nothing; returns how many. Refuses, changing nothing, when one opens with no key."""
    with transaction.atomic():
        kept = list(ChannelPassword.objects.select_for_update().order_by("pk"))
        opened = list(Package.objects.select_for_update().exclude(password_sealed="").order_by("pk"))
        broken = []
        for row in kept:
            broken += _reseal(row, "password_sealed", f"channel password #{row.pk}")
        for package in opened:
            broken += _reseal(package, "password_sealed", f"the password of package #{package.pk}")
        if broken:
            raise SealBroken(
                f"{len(broken)} archive password(s) open with none of the keys in STASHCAST_SESSION_KEYS: "
                f"{', '.join(broken[:10])}. Nothing was re-encrypted. Put back the key that sealed them (anywhere "
                "after the newest), or remove those passwords, then run this again."
            )
        ChannelPassword.objects.bulk_update(kept, ["password_sealed"], batch_size=500)
        Package.objects.bulk_update(opened, ["password_sealed"], batch_size=500)
    return len(kept) + len(opened)


def _opened(row: ChannelPassword) -> str | None:
    """The password, or None when no configured key opens it (a key removed too early): it is skipped, not fatal."""
    try:
        return unseal(row.password_sealed)
    except SealBroken:
        logger.warning("Channel password #%s opens with none of STASHCAST_SESSION_KEYS; it is skipped.", row.pk)
        return None


def _reseal(row, field: str, name: str) -> list[str]:
    try:
        setattr(row, field, reseal(getattr(row, field)))
    except (SealBroken, InvalidToken):
        return [name]
    return []

"""Archive passwords: the ones an operator keeps per source channel (sealed like sessions, core.crypto), and the
candidates a listing tries on an archive that needs one: those its captions name first, then the channel's."""

from django.core.exceptions import ValidationError
from django.db import transaction

from core.crypto import seal, unseal
from packages.models import ChannelPassword, PasswordSource
from packages.passwords import caption_passwords

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
        if any(unseal(row.password_sealed) == password for row in kept):
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
    found += [(unseal(row.password_sealed), PasswordSource.CHANNEL) for row in kept]
    for password, source in found:
        if password not in seen:
            seen.add(password)
            candidates.append((password, str(source)))
    return candidates

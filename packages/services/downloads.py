"""Download links to a package's raw files (its one file, or each volume): signed, expiring, naming who made them.

A link carries the raw file, its package, the person who made it and when it stops working, signed with the
SECRET_KEY (django.core.signing): nothing is stored, and a changed character breaks the signature. It is checked
again when used: the person must still be active and still allowed (an operator; a viewer only while
DOWNLOAD_LINKS_FOR_VIEWERS is on), so taking someone's role away ends their links too.
"""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core import signing
from django.urls import reverse

from core import clock
from core.audit import AuditScope, audit_entry_write, audit_scope_current
from core.formatting import format_moment
from core.models import AuditEntry
from core.roles import is_operator
from packages.models import Package, RawFile
from packages.raw_objects import disk_name

SALT = "stashcast.packages.download-link"
VIEWERS_REFUSED = "Download links are for operators; an operator can open them to viewers (DOWNLOAD_LINKS_FOR_VIEWERS)."


class DownloadLinkRefused(Exception):
    """A link that does not open: `status` 403 (tampered, or its maker may no longer download) or 410 (expired,
    or the raw file is no longer kept); the message says which, in words."""

    def __init__(self, message: str, *, status: int):
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class DownloadFile:
    name: str
    size: int
    sha256: str
    url: str | None  # None: the raw file is no longer kept
    gone_since: datetime | None


@dataclass(frozen=True)
class DownloadLinks:
    expires_at: datetime
    files: list[DownloadFile]

    @property
    def kept(self) -> list[DownloadFile]:
        return [file for file in self.files if file.url is not None]


def download_links_allowed(*, user) -> bool:
    if not user.is_authenticated or not user.is_active:
        return False
    return is_operator(user) or settings.DOWNLOAD_LINKS_FOR_VIEWERS


def package_raw_files(*, package: Package) -> list[RawFile]:
    """Its raw files in volume order (one for a single file)."""
    order = {name: index for index, name in enumerate(package.volume_names)}
    return sorted(package.raw_files.all(), key=lambda raw: (order.get(raw.file_name, len(order)), raw.file_name))


def _kept(raw: RawFile) -> bool:
    return raw.purged_at is None and bool(raw.object.name)


def download_links_make(*, package: Package, user, path: str = "", address: str | None = None) -> DownloadLinks:
    """Links to each of the package's raw files, good for DOWNLOAD_LINK_SECONDS; raises DownloadLinkRefused
    (403) for someone not allowed. Made outside a write request (the package page asks by GET), it leaves an
    audit entry of its own; a write request's entry already names who asked."""
    if not download_links_allowed(user=user):
        raise DownloadLinkRefused(VIEWERS_REFUSED, status=403)
    expires_at = (clock.now() + timedelta(seconds=settings.DOWNLOAD_LINK_SECONDS)).replace(microsecond=0)
    files = []
    for raw in package_raw_files(package=package):
        url = None
        if _kept(raw):
            token = signing.dumps(
                {"r": raw.pk, "p": package.pk, "u": user.pk, "e": int(expires_at.timestamp())}, salt=SALT
            )
            url = reverse("packages:download", args=[token, disk_name(raw.file_name)])
        files.append(
            DownloadFile(name=raw.file_name, size=raw.size, sha256=raw.hash, url=url, gone_since=raw.purged_at)
        )
    if audit_scope_current() is None:
        until = format_moment(expires_at, dated=True)
        action = f"download links made for package {package.pk} ({package.file_name[:150]}), until {until}"
        audit_entry_write(
            scope=AuditScope(
                via=AuditEntry.Via.PAGE,
                action=action,
                summary=f"{user.get_username()} made download links for package #{package.pk} "
                f"{package.file_name[:150]}, until {until}",
                actor=user.get_username(),
                user=user,
                path=path,
                address=address,
                status_code=200,
            )
        )
    return DownloadLinks(expires_at=expires_at, files=files)


@dataclass(frozen=True)
class OpenedLink:
    raw: RawFile
    maker: object  # the user who made the link
    expires_at: datetime


def signed_link_open(*, token: str, salt: str, kind: str, ids: tuple[str, ...], again: str):
    """A signed link's ids (`ids`' claims, in order), its expiry and its maker, still allowed to download; raises
    DownloadLinkRefused in words ("This {kind} is not one the console made…; {again}.")."""
    try:
        claims = signing.loads(token, salt=salt)
        values = [int(claims[key]) for key in (*ids, "u", "e")]
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        raise DownloadLinkRefused(
            f"This {kind} is not one the console made (it was changed or cut short); {again}.", status=403
        ) from None
    *found, user_id, expires = values
    expired_at = datetime.fromtimestamp(expires, tz=UTC)
    if clock.now() >= expired_at:
        raise DownloadLinkRefused(
            f"This {kind} expired at {format_moment(expired_at, dated=True)}; {again}.", status=410
        )
    user = get_user_model().objects.filter(pk=user_id).first()
    if user is None or not download_links_allowed(user=user):
        raise DownloadLinkRefused(f"The person who made this {kind} may no longer download files.", status=403)
    return found, expired_at, user


def download_link_open(*, token: str) -> OpenedLink:
    """The raw file a link names, who made the link and until when it works; raises DownloadLinkRefused."""
    (raw_id, package_id), expired_at, user = signed_link_open(
        token=token, salt=SALT, kind="download link", ids=("r", "p"), again="make a new one on the package's page"
    )
    raw = RawFile.objects.filter(pk=raw_id, packages__pk=package_id).first()
    if raw is None:
        raise DownloadLinkRefused("The package or its raw file was deleted.", status=410)
    if not _kept(raw):
        raise DownloadLinkRefused(raw_file_gone(raw=raw), status=410)
    return OpenedLink(raw=raw, maker=user, expires_at=expired_at)


def raw_file_gone(*, raw: RawFile) -> str:
    when = f" (purged {raw.purged_at:%Y-%m-%d})" if raw.purged_at else ""
    return f"The raw file {raw.file_name} is no longer kept{when}; the package is still in its destination channel."


def download_link_used(*, raw: RawFile, maker, path: str, address: str | None) -> None:
    """A download begun (the whole file, or a range from its first byte) leaves an audit entry naming the
    link's maker; the further ranges of the same download do not."""
    action = f"download of {raw.file_name[:200]} by a link of {maker.get_username()}"
    summary = f"a download of {raw.file_name[:200]} began, by a link {maker.get_username()} made"
    audit_entry_write(
        scope=AuditScope(
            via=AuditEntry.Via.PAGE,
            action=action,
            summary=summary,
            actor=maker.get_username(),
            user=maker,
            path=path,
            address=address,
        )
    )

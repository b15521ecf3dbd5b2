"""Ingestion trouble the operators must hear about, raised through core.notifications.

One function per kind of trouble, so the pipeline and recovery call them in one line each.
"""

from django.urls import reverse

from accounts.models import AuthState, TelegramAccount
from core.models import Notification, NotificationSeverity
from core.notifications import notification_raise, notifications_resolve
from ingestion.models import Channel
from ingestion.services import destination_get
from packages.models import Package

CHANNEL_UNREACHABLE = "channel_unreachable"
ACCOUNT_UNUSABLE = "account_unusable"
DESTINATION_UNREACHABLE = "destination_unreachable"
DESTINATION_MESSAGES_GONE = "destination_messages_gone"
SPLIT_MISMATCH = "split_mismatch"
DISK_FULL = "disk_full"

DESTINATION = "destination"
STAGING_DISK = "disk:staging"

# How many file names a notification's message lists before "and N more".
LISTED = 5


def notify_channel_unreachable(*, channel: Channel, account: TelegramAccount, error: str) -> Notification:
    return notification_raise(
        type=CHANNEL_UNREACHABLE,
        severity=NotificationSeverity.ERROR,
        title=f"Channel {channel.title} is unreachable",
        message=f"{account} could not read it: {error}. It is tried again next cycle; the other channels go on.",
        subject=channel.notification_subject,
        url=reverse("ingestion:channel-detail", args=[channel.pk]),
        context={"channel_id": channel.pk, "account": account.phone, "error": error},
    )


def notify_account_unusable(*, account: TelegramAccount) -> Notification:
    """After accounts.services.account_mark_unusable: the account is expired or restricted."""
    if account.auth_state == AuthState.EXPIRED:
        title = f"Account {account} needs a new login"
        advice = "Its Telegram session expired or was revoked; log it in again on the Accounts page."
    else:
        title = f"Account {account} was restricted by Telegram"
        advice = "It is stopped; ingestion and reminders go on with the other accounts."
    return notification_raise(
        type=ACCOUNT_UNUSABLE,
        severity=NotificationSeverity.ERROR,
        title=title,
        message=f"{account.last_error} {advice}".strip(),
        subject=account.notification_subject,
        url=reverse("accounts:list"),
        context={"account": account.phone, "auth_state": account.auth_state, "error": account.last_error},
    )


def notify_destination_unreachable(*, error: str = "") -> Notification:
    """No destination, no logged-in writer for it, or the destination refused an upload."""
    destination = destination_get()
    if destination is None:
        title = "No destination channel"
        message = "Archives wait as skipped packages until a destination is chosen on the Channels page."
    elif error:
        title = f"The destination {destination.title} refused an upload"
        message = f"{error}. Check that the writer account can still post there."
    else:
        title = f"The destination {destination.title} has no logged-in writer"
        message = "Archives wait as skipped packages until a writer account is logged in."
    url = reverse("ingestion:channel-detail", args=[destination.pk]) if destination else reverse("ingestion:channels")
    return notification_raise(
        type=DESTINATION_UNREACHABLE,
        severity=NotificationSeverity.ERROR,
        title=title,
        message=message,
        subject=DESTINATION,
        url=url,
        context={"destination_id": destination.pk if destination else None, "error": error},
    )


def notify_destination_messages_gone(*, packages: list[Package]) -> Notification:
    names = [package.file_name for package in packages]
    listed = ", ".join(names[:LISTED]) + (f" and {len(names) - LISTED} more" if len(names) > LISTED else "")
    return notification_raise(
        type=DESTINATION_MESSAGES_GONE,
        severity=NotificationSeverity.WARNING,
        title=f"{len(names)} upload{'s' if len(names) != 1 else ''} vanished from the destination",
        message=f"{listed}: the destination message is gone, so the next cycle uploads them again from the source.",
        subject=DESTINATION,
        url=reverse("ingestion:channels"),
        context={"packages": names},
    )


def notify_disk_full(*, file_name: str, error: str) -> Notification:
    return notification_raise(
        type=DISK_FULL,
        severity=NotificationSeverity.ERROR,
        title="The staging disk is too full to ingest",
        message=f"{file_name}: {error} The set is tried again next cycle; free space there (INGEST_STAGING_DIR) "
        "or lower the raw file retention of the source channels.",
        subject=STAGING_DISK,
        url=reverse("ingestion:skipped"),
        context={"file_name": file_name, "error": error},
    )


def notify_split_mismatch(*, file_name: str, error: str) -> Notification:
    return notification_raise(
        type=SPLIT_MISMATCH,
        severity=NotificationSeverity.ERROR,
        title=f"Splitting {file_name} for upload went wrong",
        message=f"{error}. The run stopped there and the set is tried again next cycle; check the staging disk "
        "(INGEST_STAGING_DIR).",
        subject=f"split:{file_name}",
        url=reverse("ingestion:runs"),
        context={"file_name": file_name, "error": error},
    )


def notifications_resolve_uploads() -> None:
    """A set went up to the destination: it has room on the staging disk and a writer that can post there."""
    notifications_resolve(subject=DESTINATION, types=[DESTINATION_UNREACHABLE])
    notifications_resolve(subject=STAGING_DISK, types=[DISK_FULL])

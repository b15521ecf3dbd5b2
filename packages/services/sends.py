"""What a send to Telegram records: the send queued with its parts, each part's outcome, its counters, a restart.

`package_send_queue` and `package_send_restart` run inside the caller's transaction: the caller enqueues the
worker once it commits.
"""

from django.db.models import Count, Q
from django.utils import timezone

from accounts.models import Chat, TelegramAccount
from core import locks
from core.errors import OperatorError
from core.models import RunStatus
from packages.models import Collection, Package, PackageSend, PackageSendPart


def package_send_queue(
    *,
    packages: list[Package],
    chat: Chat,
    account: TelegramAccount,
    topic_id: int | None,
    collection: Collection | None,
    parts: list[PackageSendPart],
) -> PackageSend:
    """The send and its parts (not yet saved, in order), unless the same packages are already going to `chat`."""
    locks.advisory_xact_lock(namespace=locks.PACKAGE_SEND, name=f"{chat.pk}")
    busy = (
        PackageSend.objects.filter(
            chat=chat, parts__package__in=packages, status__in=[RunStatus.QUEUED, RunStatus.RUNNING]
        )
        .distinct()
        .first()
    )
    if busy is not None:
        raise OperatorError(f"{busy.title} is already being sent to “{chat.title}” (send #{busy.pk}).")
    send = PackageSend.objects.create(
        title=collection.name if collection else packages[0].file_name,
        package=None if collection else packages[0],
        collection=collection,
        account=account,
        chat=chat,
        topic_id=topic_id,
    )
    for part in parts:
        part.send = send
    PackageSendPart.objects.bulk_create(parts)
    send.parts_total = len(parts)
    send.save(update_fields=["parts_total"])
    return send


def package_send_counts_record(*, send: PackageSend) -> dict[str, int]:
    """The send's counters from its parts."""
    counts = send.parts.aggregate(
        parts_sent=Count("pk", filter=Q(sent_at__isnull=False)),
        parts_failed=Count("pk", filter=Q(sent_at__isnull=True) & ~Q(error="")),
    )
    PackageSend.objects.filter(pk=send.pk).update(**counts)
    return counts


def package_send_part_sent(*, part: PackageSendPart, message_id: int) -> None:
    PackageSendPart.objects.filter(pk=part.pk).update(sent_message_id=message_id, sent_at=timezone.now())


def package_send_part_failed(*, part: PackageSendPart, error: str) -> None:
    """This part only could not be copied (its message is gone, or the like)."""
    PackageSendPart.objects.filter(pk=part.pk).update(error=error[:2000])


def package_send_restart(*, send: PackageSend) -> bool:
    """Queued again with its failed parts cleared; False when the send changed since the operator saw it."""
    if not PackageSend.objects.filter(pk=send.pk, status=send.status).update(
        status=RunStatus.QUEUED, error="", finished_at=None
    ):
        return False
    send.parts.filter(sent_at__isnull=True).update(error="")
    return True

"""Send to Telegram: a package's destination messages copied to a chat, or a person, an operator picks.

`package_send_create` checks the choice, picks (or checks) the account — one that reads every destination
chat involved and may post in the chosen chat (for a person: has a private chat with them) — and writes the
send with one part per destination message, each with its random_id fixed before anything goes out.
`package_send_execute` (a worker on `fanout`) takes the account's send lock (one sending run per account:
reminder runs and sends alike), claims the send, opens the account's gateway (its session lease) and copies
part after part, each paced by the account's shared budget (`core.ratelimit`), each marked sent as soon as
Telegram answers. Recipients read the source caption (or the operator's) under each file, never the catalog
line, which stays in the destination. A send stopped part-way goes on at its first unsent part; the part in
flight when a worker died goes again with the same random_id, and Telegram answers RANDOM_ID_DUPLICATE instead
of posting twice.
"""

import logging
import secrets

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Case, When
from django.urls import reverse

from accounts import pace
from accounts.models import AccountChat, AuthState, Chat, ChatTopic, PaceEventKind, TelegramAccount
from accounts.sessions import account_gateway, account_refusal_record
from core import task_names
from core.db_thread import in_db_thread
from core.engine import BUSY, RunEngine, WorkLost, WorkStopped, run_engine_start
from core.errors import OperatorError
from core.models import RunStatus
from core.notifications import notification_raise
from core.ratelimit import BucketHalted, BucketUnavailable, Pace
from core.runs import run_finish, run_hand_back, run_task_send
from packages import services
from packages.models import Collection, Package, PackageSend, PackageSendPart
from telegram.errors import AccountRestricted, AuthRequired, FloodWait, SessionInUse, TelegramError, TransientError
from telegram.records import (
    CAPTION_MAX,
    GENERAL_TOPIC_ID,
    PREMIUM_CAPTION_MAX,
    TOPIC_ID_MAX,
    USER,
    ChatRef,
    utf16_units,
)
from telegram.retry import TransientRetries

logger = logging.getLogger(__name__)

SEND_FAILED = "package_send_failed"


def _senders(*, from_chats: set[int], chat: Chat):
    """Logged-in, switched-on accounts that read every chat of `from_chats` (pks) and may post in `chat` (a
    person: have a private chat with them)."""
    accounts = TelegramAccount.objects.filter(is_active=True, auth_state=AuthState.AUTHENTICATED).filter(
        chat_links__chat=chat, chat_links__can_post=True
    )
    for chat_pk in from_chats:
        accounts = accounts.filter(pk__in=AccountChat.objects.filter(chat_id=chat_pk).values("account_id"))
    return accounts.order_by("phone")


def package_send_choices(*, destination_ids) -> list[tuple[TelegramAccount, list[Chat]]]:
    """For the Send form: each account that reads every destination chat of `destination_ids` (pks), with the
    chats it may post in and the people it has a private chat with (chats first, each by name)."""
    if not destination_ids:
        return []
    choices = []
    readers = TelegramAccount.objects.filter(is_active=True, auth_state=AuthState.AUTHENTICATED)
    for chat_pk in set(destination_ids):
        readers = readers.filter(pk__in=AccountChat.objects.filter(chat_id=chat_pk).values("account_id"))
    for account in readers.order_by("phone"):
        chats = Chat.objects.filter(account_links__account=account, account_links__can_post=True).order_by(
            Case(When(type=USER, then=1), default=0), "title", "pk"
        )
        chats = list(chats)
        if chats:
            choices.append((account, chats))
    return choices


def package_send_captions(*, packages: list[Package], caption: str | None = None) -> list[str]:
    """What each destination message will carry, in send order, instead of its catalog line (which stays in the
    destination): each package's source caption under its first part, or, when the operator wrote one (even
    empty), that caption under the send's first part and nothing under the others."""
    captions = []
    for package in packages:
        first = package.caption if caption is None else (caption if not captions else "")
        captions += [first] + [""] * (len(package.dest_message_ids) - 1)
    return captions


def package_send_caption_check(*, captions: list[str], account: TelegramAccount) -> None:
    """Telegram refuses a caption above its limit (UTF-16 units; a Premium account's is longer)."""
    limit = PREMIUM_CAPTION_MAX if account.is_premium else CAPTION_MAX
    for caption in captions:
        length = utf16_units(caption)
        if length > limit:
            premium = "" if account.is_premium else f" ({PREMIUM_CAPTION_MAX:,} for a Premium account)"
            raise ValidationError(
                {
                    "caption": f"The caption is {length:,} characters long as Telegram counts them; at most "
                    f"{limit:,} go under a file{premium}. Write a shorter one."
                }
            )


def package_send_create(
    *,
    packages: list[Package],
    chat: Chat,
    account: TelegramAccount | None = None,
    topic_id: int | None = None,
    collection: Collection | None = None,
    caption: str | None = None,
) -> PackageSend:
    """Queue a copy of the packages' destination messages, in order, to `chat` (and forum topic); a collection's
    packages go as one send, named after it. Recipients read the source caption, or `caption` when the operator
    wrote one (package_send_captions), never the catalog line."""
    if not packages:
        raise OperatorError("There is no package to send.")
    for package in packages:
        if package.destination_chat_id is None or not package.dest_message_ids:
            raise OperatorError(f"{package.file_name} has no message in the destination channel to copy.")
        if package.reupload_needed:
            raise OperatorError(
                f"{package.file_name}'s destination message was deleted; the next cycle uploads it again, "
                "send it after that."
            )
    if topic_id is not None:
        if chat.is_person:
            raise ValidationError(
                {"topic_id": f"“{chat.title}” is a person: a private chat has no topics; leave the topic empty."}
            )
        if not 1 <= topic_id <= TOPIC_ID_MAX:
            raise ValidationError({"topic_id": f"A topic id is between 1 and {TOPIC_ID_MAX}."})
        if not chat.is_forum:
            raise ValidationError({"topic_id": f"“{chat.title}” has no topics; leave the topic empty."})
        if topic_id != GENERAL_TOPIC_ID and not ChatTopic.objects.filter(chat=chat, topic_id=topic_id).exists():
            raise ValidationError({"topic_id": f"“{chat.title}” has no topic {topic_id}; refresh its chats."})
    senders = _senders(from_chats={package.destination_chat_id for package in packages}, chat=chat)
    if account is None:
        account = senders.first()
        if account is None:
            can = "has a private chat with" if chat.is_person else "may post in"
            raise ValidationError(
                {"chat": f"No logged-in account both reads the destination and {can} “{chat.title}”."}
            )
    elif not senders.filter(pk=account.pk).exists():
        must = "have a private chat with" if chat.is_person else "may post in"
        raise ValidationError(
            {"account": f"{account} cannot do this: it must read the destination and {must} “{chat.title}”."}
        )
    captions = package_send_captions(packages=packages, caption=caption)
    package_send_caption_check(captions=captions, account=account)
    parts = [
        PackageSendPart(
            package=package,
            from_chat_id=package.destination_chat_id,
            message_id=message_id,
            name=name,
            # stored before anything is sent: the one id this part will ever go out with
            random_id=secrets.randbits(63) or 1,
        )
        for package in packages
        for message_id, name in zip(package.dest_message_ids, package_part_names(package), strict=True)
    ]
    for position, (part, part_caption) in enumerate(zip(parts, captions, strict=True)):
        part.position = position
        part.caption = part_caption
    with transaction.atomic():
        send = services.package_send_queue(
            packages=packages, chat=chat, account=account, topic_id=topic_id, collection=collection, parts=parts
        )
        transaction.on_commit(lambda: package_send_enqueue(send.pk))
    return send


def package_part_names(package: Package) -> list[str]:
    """The file name of each of the package's destination messages, in order."""
    names = list(package.dest_part_names)
    return names + [package.file_name] * (len(package.dest_message_ids) - len(names))


def package_send_enqueue(send_id: int, countdown: int = 0) -> None:
    run_task_send(task_names.PACKAGE_SEND_EXECUTE, send_id, countdown=countdown)


def package_send_execute(*, send_id: int) -> str | None:
    """Copy a queued send's parts; its ending status, BUSY when its account is busy, None when nothing to do."""
    return run_engine_start(model=PackageSend, run_id=send_id, engine=_Copier)


class _Stop(Exception):
    """The whole send stops with this message."""


class _Copier(RunEngine):
    def __init__(self, *, run: PackageSend):
        super().__init__(run=run)
        self.send = run
        self.account = run.account

    def execute(self) -> str | None:
        error = ""
        try:
            self.drive(self._main)
        except SessionInUse:
            # Another process talks as this account (an ingestion cycle): queued again, tried again later.
            run_hand_back(run=self.send, enqueue=False)
            return BUSY
        except WorkLost as lost:
            self.hand_back(lost)
            return None
        except WorkStopped:
            self._counts()  # the operator's ending stands; the counters stay true
            return None
        except _Stop as exc:
            error = str(exc)
        except (AccountRestricted, AuthRequired) as exc:
            # PEER_FLOOD rests the account (every send and run of it stops); else its login page says what to do.
            doing = f"during send #{self.send.pk}"
            if account_refusal_record(account=self.account, error=exc, doing=doing):
                error = f"{self.account} rests (Telegram answered {exc.rpc} {doing}); send again after the rest."
            else:
                error = f"{self.account} cannot send: {exc.rpc or exc}; log it in again or pick another account."
        except TelegramError as exc:
            logger.warning("Send #%s stopped: %s", self.send.pk, exc)
            error = f"{exc.rpc}: {exc}" if exc.rpc else str(exc)
        counts = self._counts()
        if counts["parts_sent"] == self.send.parts_total:
            status = RunStatus.SUCCESS
        else:
            status = RunStatus.PARTIAL if counts["parts_sent"] else RunStatus.FAILED
            error = error or "Some parts could not be copied; see each part."
        if not run_finish(run=self.send, status=status, error=error, **counts):
            return None
        if status != RunStatus.SUCCESS:
            package_send_notify_failed(send=self.send)
        logger.info("Send #%s: %s (%s of %s parts)", self.send.pk, status, counts["parts_sent"], self.send.parts_total)
        return status

    def _counts(self) -> dict[str, int]:
        return services.package_send_counts_record(send=self.send)

    def _load(self) -> tuple[list[PackageSendPart], dict[int, ChatRef]]:
        parts = list(self.send.parts.filter(sent_at__isnull=True, error="").select_related("from_chat"))
        chats = {self.send.chat_id, *(part.from_chat_id for part in parts)}
        links = AccountChat.objects.filter(account=self.account, chat_id__in=chats).select_related("chat")
        refs = {link.chat_id: link.ref for link in links}
        missing = [chat_id for chat_id in chats if chat_id not in refs]
        if missing:
            gone = Chat.objects.filter(pk=missing[0]).first()
            where = f"no longer has a private chat with “{gone}”" if gone.is_person else f"is no longer in “{gone}”"
            raise _Stop(f"{self.account} {where}; refresh its chats and send again.")
        return parts, refs

    def _part_done(self, part: PackageSendPart, *, message_id: int | None = None, error: str = "") -> None:
        if error:
            services.package_send_part_failed(part=part, error=error)
        else:
            services.package_send_part_sent(part=part, message_id=message_id)
            self.progressed()
        self._counts()

    async def _spent(self, taken: Pace) -> None:
        await in_db_thread(pace.account_send_spent)(account=self.account, pace=taken)

    async def _may_send(self, bucket) -> None:
        """Before each message: the claim and the operator's word, then the account's rest and stop as the database
        keeps them (Redis may have forgotten them), then a token (a halted bucket: the account rests or stopped)."""
        await self.guard()
        problem = await in_db_thread(pace.account_send_check)(account=self.account, bucket=bucket)
        if problem:
            raise _Stop(problem)
        try:
            await bucket.acquire(taken=self._spent)
        except BucketHalted as exc:
            problem = await in_db_thread(pace.account_send_check)(account=self.account, bucket=bucket)
            raise _Stop(problem or f"Sending is held for {self.account}; send again later.") from exc
        except BucketUnavailable as exc:
            raise _Stop(f"{exc} Nothing more was sent; send again once Redis is back.") from exc
        self.check()

    async def _main(self) -> None:
        parts, refs = await in_db_thread(self._load)()
        if not parts:
            return
        bucket = pace.account_bucket(account=self.account)
        target = refs[self.send.chat_id]
        async with account_gateway(account=self.account) as gateway:
            for part in parts:
                retries = TransientRetries(settings.REMINDER_TRANSIENT_RETRIES)
                while True:
                    await self._may_send(bucket)
                    try:
                        sent = await gateway.copy_message(
                            refs[part.from_chat_id],
                            part.message_id,
                            target,
                            random_id=part.random_id,
                            topic_id=self.send.topic_id,
                            caption=part.caption,  # "" drops the catalog line: it stays in the destination
                        )
                    except FloodWait as exc:
                        await self._flood(bucket, exc)
                        continue
                    except TransientError as exc:
                        await retries.after(exc)  # raises once the tries are used up: the send stops
                        continue
                    except (AccountRestricted, AuthRequired):
                        raise
                    except TelegramError as exc:  # this part only: its message is gone, or the like
                        await in_db_thread(self._part_done)(part, error=f"{exc.rpc}: {exc}" if exc.rpc else str(exc))
                        break
                    await in_db_thread(self._part_done)(part, message_id=sent.id)
                    break

    async def _flood(self, bucket, exc: FloodWait) -> None:
        """Every sender of the account waits (a pause of its bucket) and its shared pace is lowered, as for a
        fan-out; too many FloodWaits in a while rest the account, and the next message stops the send."""
        logger.warning("Send #%s: %s waits %s s (%s)", self.send.pk, self.account, exc.seconds, exc.rpc)
        recent = await in_db_thread(pace.account_pace_lower)(
            account=self.account,
            bucket=bucket,
            kind=PaceEventKind.FLOOD_WAIT,
            pause_seconds=exc.seconds,
            reason=f"Telegram asked to wait {exc.seconds} s ({exc.rpc}) during send #{self.send.pk}",
        )
        if recent >= settings.ACCOUNT_REST_FLOOD_WAITS:
            minutes = settings.ACCOUNT_REST_WINDOW_MINUTES
            await in_db_thread(pace.account_rest)(
                account=self.account, reason=f"{recent} FloodWaits within {minutes} minutes"
            )


def package_send_notify_failed(*, send: PackageSend) -> None:
    notification_raise(
        type=SEND_FAILED,
        severity="warning",
        title=f"Sending {send.title} to {send.chat.title} did not finish",
        message=f"{send.parts_sent} of {send.parts_total} parts were copied. {send.error}",
        subject=f"package-send:{send.pk}",
        url=reverse("packages:detail", args=[send.package_id]) if send.package_id else "",
    )


def package_send_retry(*, send: PackageSend) -> PackageSend:
    """Send again what did not go: the failed parts get another try (same random_ids: nothing goes twice)."""
    if not send.is_over or send.status == RunStatus.SUCCESS:
        raise OperatorError("Only a send that ended with parts unsent can be tried again.")
    with transaction.atomic():
        if not services.package_send_restart(send=send):
            raise OperatorError("This send changed meanwhile; reload the page.")
        transaction.on_commit(lambda: package_send_enqueue(send.pk))
    send.refresh_from_db()
    return send

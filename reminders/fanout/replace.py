"""What a group's new post does to the previous run's post there: Replace deletes it, or edits it in place when
asked and the parts allow; Pin pins the new one and unpins the previous. Each step is recorded before it is done,
so a resume or a retry never deletes, edits or pins twice."""

import logging

from core.db_thread import in_db_thread
from reminders import services
from reminders.fanout.parts import Part
from reminders.fanout.stops import TargetFailed
from reminders.models import PreviousPost, ReminderRun, ReminderRunTarget
from telegram.errors import TelegramError
from telegram.records import ChatRef, MediaHandle

logger = logging.getLogger(__name__)


class Replacing:
    """Replace, edit in place and Pin (a part of `Fanout`)."""

    def _previous_post(self, target: ReminderRunTarget) -> ReminderRunTarget | None:
        """The group's post from the reminder's run before this one (what Replace deletes, Pin unpins)."""
        return (
            ReminderRunTarget.objects.filter(
                run__reminder_id=self.run.reminder_id,
                run_id__lt=self.run.pk,
                chat_id=target.chat_id,
                topic_id=target.topic_id,
            )
            .exclude(message_ids=[])
            .order_by("-run_id")
            .first()
        )

    def _previous_parts(self, previous: ReminderRunTarget) -> list[dict]:
        return ReminderRun.objects.filter(pk=previous.run_id).values_list("parts", flat=True).get()

    def _target_step_done(self, target: ReminderRunTarget, step: str) -> None:
        services.run_target_step_done(target=target, step=step)

    def _previous_recorded(
        self, target: ReminderRunTarget, post: str, note: str = "", done: bool | None = None
    ) -> None:
        """What Replace does with the previous post, recorded before it is done: a resume or a retry goes on
        the same way (editing at its next part while it edits), never deleting or editing twice."""
        done = post != PreviousPost.EDITED if done is None else done
        services.run_target_previous_record(target=target, post=post, note=note[:300], done=done)
        target.previous_post, target.previous_note, target.previous_removed = post, note[:300], done

    async def _replace_previous(self, target: ReminderRunTarget, ref: ChatRef, first: int) -> list[int]:
        """Replace the previous run's post in the group, once: edited in place when asked and the parts allow
        (returns its messages, one per part, to edit), else deleted before the first part goes out."""
        if target.previous_removed:
            return []
        if target.previous_post == PreviousPost.EDITED:  # a resumed or retried group goes on editing
            previous = await in_db_thread(self._previous_post)(target)
            return list(previous.message_ids) if previous is not None else []
        if first > 0:
            return []
        previous = await in_db_thread(self._previous_post)(target)
        if previous is None:
            await in_db_thread(self._previous_recorded)(target, PreviousPost.NONE)
            return []
        if self.options.get("edit_in_place"):
            why = self._not_editable(previous, await in_db_thread(self._previous_parts)(previous))
            if not why:
                await in_db_thread(self._previous_recorded)(target, PreviousPost.EDITED)
                return list(previous.message_ids)
            await in_db_thread(self._previous_recorded)(target, PreviousPost.DELETED, why)
        else:
            await in_db_thread(self._previous_recorded)(target, PreviousPost.DELETED)
        await self._delete(ref, [*(i for i in previous.message_ids if i), *previous.album_ids])
        return []

    def _not_editable(self, previous: ReminderRunTarget, previous_parts: list[dict]) -> str:
        """Why the previous post cannot be edited into this one ("" when it can): Telegram edits one message
        into one message, so the posts must have the same parts, text for text and one media for one media."""
        if any(part.get("album") for part in previous_parts) or any(part.album for part in self.parts):
            return "an album cannot be edited into another post"
        shapes = [bool(part["media"]) for part in previous_parts]
        if shapes != [part.media is not None for part in self.parts]:
            return "the parts changed (text and media must stay in the same places)"
        if len(previous.message_ids) != len(self.parts) or None in previous.message_ids:
            return "the previous post's messages are not all known"
        return ""

    async def _delete(self, ref: ChatRef, ids: list[int]) -> None:
        if ids:
            await self._telegram_step(lambda: self.gateway.delete_messages(self.moved.get(ref.id, ref), ids))

    async def _edit(self, target: ReminderRunTarget, ref: ChatRef, index: int, part: Part, message_id: int) -> bool:
        """Edit the previous post's message of this part into it; False when Telegram refuses (the message is
        gone, or too old to edit). The same content again (a retried edit) is no error."""

        async def edit(handles: list[MediaHandle]) -> None:
            await self.gateway.edit_message(
                self.moved.get(ref.id, ref),
                message_id,
                text=part.formatted.text,
                entities=part.formatted.entities,
                media=handles[0] if handles else None,
                link_preview=self.options.get("link_preview", True),
            )

        try:
            await self._request(edit, media=part.files)
        except TelegramError as exc:
            self.edit_refusal = exc.rpc or str(exc)
            return False
        self.messages_sent += 1
        return True

    async def _edit_refused(self, target: ReminderRunTarget, ref: ChatRef, index: int, editing: list[int]) -> None:
        """Telegram refused to edit a part: the previous post's messages from it on are deleted and the parts
        sent anew (all of them when it was the first part)."""
        note = f"Telegram refused the edit ({self.edit_refusal})"
        post = PreviousPost.DELETED
        if index > 0:  # the first parts stay edited
            note, post = f"parts {index + 1}–{len(self.parts)} sent anew: {note}", PreviousPost.EDITED
        await in_db_thread(self._previous_recorded)(target, post, note, done=True)
        await self._delete(ref, editing[index:])

    async def _pin(self, target: ReminderRunTarget, ref: ChatRef) -> None:
        """Pin the group's new post (its first message), without a notification, and unpin the previous run's
        pinned one; recorded at once, so a resume or a retry never pins twice."""
        ref = self.moved.get(ref.id, ref)
        previous = (
            None if target.previous_post == PreviousPost.DELETED else await in_db_thread(self._previous_post)(target)
        )
        kept = previous is not None and previous.pinned and previous.message_ids[0] == target.message_ids[0]
        if not kept:  # an edited post pinned last time is pinned still
            await self._telegram_step(lambda: self.gateway.pin_message(ref, target.message_ids[0]))
        await in_db_thread(self._target_step_done)(target, "pinned")
        target.pinned = True
        if previous is not None and previous.pinned and previous.message_ids[0] not in (None, target.message_ids[0]):
            await self._telegram_step(lambda: self.gateway.pin_message(ref, previous.message_ids[0], unpin=True))

    async def _telegram_step(self, call) -> None:
        """A request beside the sends (delete, pin), paced like them; what Telegram refuses for this group
        (the post already gone, no right to pin), or trouble that outlasts the retries, is logged, not a failed
        group: the parts went out (or go out next), and a failed group would be offered for a second send."""
        try:
            await self._request(lambda _: call())
        except (TelegramError, TargetFailed) as exc:
            logger.info("Reminder run #%s: %s", self.run.pk, exc)

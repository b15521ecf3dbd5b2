"""How the Reminders pages put things into words and numbers: schedules, durations, the ETA panel, list rows
and run panels. Reads only (selectors); the views decide what to render."""

from dataclasses import dataclass
from datetime import datetime

from cron_descriptor import ExpressionDescriptor, Options
from django.conf import settings
from django.utils.html import escape
from django.utils.safestring import mark_safe

from accounts.selectors import chat_topics
from core import clock
from core.formatting import plural as plural  # the pages of reminders say counts as the others do
from reminders import selectors
from reminders.eta import Eta, eta_estimate
from reminders.models import ACTIVE, IN_FLIGHT, Reminder, ReminderRun, TargetStatus
from reminders.schedule import (
    HORIZON_TEXT,
    DeliveryWindow,
    crontab_parse,
    local_hm,
    window_hours_errors,
    window_text,
    within_horizon,
    zone,
)
from reminders.services import PartSpec, ReminderSpec, part_formatted
from telegram.formatting import FormatError, formatted_html

FAILED_SHOWN = 5

CRON_WORDS = Options()
CRON_WORDS.use_24hour_time_format = True


# Words and numbers for the pages ---------------------------------------------------------------------------------


def schedule_text(*, crontab: str, at: datetime | None, timezone: str) -> str:
    """The schedule as the operator would say it: "At 09:00, Monday through Friday"."""
    if crontab:
        try:
            crontab_parse(crontab)  # never describe what the validator refuses ("At 61 minutes past the hour")
        except ValueError:
            return f"{crontab} (not a valid crontab)"
        try:
            words = ExpressionDescriptor(crontab, CRON_WORDS).get_description()
        except Exception:  # cron-descriptor raises its own types for what celery accepts; the crontab says it
            return crontab
        # "At 09:00" alone reads like once; a crontab with no day, month or weekday fires every day
        return f"{words}, every day" if crontab.split()[2:] == ["*", "*", "*"] else words
    if at is not None:
        try:
            local = at.astimezone(zone(timezone))
        except ValueError:
            local = at
        return f"Once, {local:%a %-d %b %Y} at {local:%H:%M}"
    return "Manual: only when you press Send now"


def duration_text(minutes: int) -> str:
    hours, minutes = divmod(minutes, 60)
    if not hours:
        return f"{minutes} min"
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"


@dataclass(frozen=True)
class ReminderRow:
    reminder: Reminder
    schedule: str
    window: str
    last_run: ReminderRun | None
    send: dict  # send_now_context: its Send now button and confirm


def reminder_row(reminder: Reminder, last_run: ReminderRun | None = None) -> ReminderRow:
    text = schedule_text(crontab=reminder.schedule_crontab, at=reminder.schedule_at, timezone=reminder.timezone)
    return ReminderRow(
        reminder=reminder,
        schedule=text,
        window=window_text(reminder.window_start_hour, reminder.window_end_hour),
        last_run=last_run,
        # the latest run is the one that can still be going on (services.reminder_fire checks them all)
        send=send_now_context(reminder, active=last_run if last_run and last_run.status in ACTIVE else None),
    )


def eta_state(estimate: Eta) -> str:
    """The pill's colour: fits, waits for the window, likely to pause."""
    if not estimate.fits:
        return "pause"
    return "wait" if estimate.waits else "fits"


def eta_context(spec: ReminderSpec | None, *, draft_parts: int = 0) -> dict:
    """What the ETA panel shows for what the operator has entered so far; never an error page. Without a
    sender there is no spec yet: `draft_parts` is how many parts the form holds."""
    context = {"spec": spec}
    if spec is None:
        note = "Choose the account that sends it to see how long it takes."
        return {**context, "parts": draft_parts, "eta_note": note}
    parts = len(spec.parts)
    targets = selectors.reminder_groups_count(
        targets=[(target.chat.pk, target.topic_id) for target in spec.targets], audiences=spec.audiences
    )
    context.update(
        parts=parts,
        targets=targets,
        messages_total=parts * targets,
        schedule=schedule_text(crontab=spec.schedule_crontab, at=spec.schedule_at, timezone=spec.timezone),
        window=window_text(spec.window_start_hour, spec.window_end_hour),
        observed_rate=selectors.account_observed_rate(account_id=spec.account.pk),
    )
    if not parts or not targets:
        return {**context, "eta_note": "Add a part and pick groups to see how long it takes."}
    try:
        tz = zone(spec.timezone)
    except ValueError:
        return {**context, "eta_note": "Pick a valid time zone to see whether it fits."}
    if window_hours_errors(spec.window_start_hour, spec.window_end_hour):
        return {**context, "eta_note": "The window must open before it closes."}
    now = clock.now()
    if spec.schedule_crontab:
        fire_at = selectors.reminder_next_fire_at(crontab=spec.schedule_crontab, tz=tz, after=now)
        fire_label = "Next send"
        if fire_at is None:
            return {**context, "eta_note": "Write a valid crontab to see whether it fits."}
    elif spec.schedule_at is not None:
        fire_at, fire_label = spec.schedule_at, "Sends"
        if fire_at <= now:
            return {
                **context,
                "eta_note": "The one-off time has already passed; pick a later one to see whether it fits.",
            }
        if not within_horizon(fire_at, now):
            return {**context, "eta_note": f"Pick a time within {HORIZON_TEXT} to see whether it fits."}
    else:
        fire_at, fire_label = now, "If sent now"
    rate = settings.REMINDER_MAX_SEND_PER_MINUTE
    window = DeliveryWindow(tz=tz, start_hour=spec.window_start_hour, end_hour=spec.window_end_hour)
    estimate = eta_estimate(targets=targets, parts=parts, fire_at=fire_at, window=window, rate_per_minute=rate)
    local_fire = fire_at.astimezone(tz)
    return {
        **context,
        "eta": estimate,
        "eta_state": eta_state(estimate),
        "eta_duration": duration_text(estimate.duration_minutes),
        "fire_label": fire_label,
        "fire_text": f"{local_fire:%a %-d %b}, {local_fire:%H:%M}",
        "start_text": window.local_when(estimate.starts_at, fire_at) if estimate.waits else "",
        "finish_text": local_hm(estimate.finishes_at, tz),
        "finish_other_day": estimate.finishes_at.astimezone(tz).date() != local_fire.date(),
        "window_end_text": local_hm(estimate.window_end_at, tz) if estimate.window_end_at else "",
        "rate": rate,
        "burst": settings.REMINDER_SEND_BURST,
    }


def send_now_context(reminder: Reminder, *, active: ReminderRun | None = None) -> dict:
    """What Send now would do at this moment, for its button and its confirm: send, or wait for the window.
    With a run of the reminder still going on (`active`), the button offers that run, and sending again to
    every group needs its own confirm."""
    now = clock.now()
    window = DeliveryWindow.of(reminder)
    parts = len(reminder.parts.all())
    targets = selectors.reminder_groups_count(
        targets=[(target.chat_id, target.topic_id) for target in reminder.targets.all()],
        audiences=[link.audience_id for link in reminder.audience_links.all()],
    )
    estimate = eta_estimate(
        targets=targets, parts=parts, fire_at=now, window=window, rate_per_minute=settings.REMINDER_MAX_SEND_PER_MINUTE
    )
    groups = plural(targets, "group")
    if active is not None:
        return {
            "send_active": active,
            "send_waits": estimate.waits,
            "send_confirm": (
                f"Run #{active.pk} of “{reminder.name}” is still {active.outcome.label.lower()} "
                f"({active.sent} of {plural(active.total, 'group')} delivered). Send it again to every group, "
                f"all {groups}? Groups that already got it get it twice."
            ),
        }
    if not estimate.waits:
        return {"send_waits": False, "send_confirm": f"Send “{reminder.name}” now to {groups}?"}
    opens = window.local_when(estimate.starts_at, now)
    return {
        "send_waits": True,
        "send_opens": opens,
        "send_confirm": (
            f"It is outside the delivery window {window.text} ({reminder.timezone}); the run would wait until "
            f"{opens}. Start “{reminder.name}” for {groups} when the window opens?"
        ),
    }


def target_titles(targets) -> list[str]:
    """“Group / Topic” for each target (a TargetSpec or a ReminderTarget), a forum topic by its title."""
    topics = chat_topics(chat_ids={target.chat.pk for target in targets if target.topic_id})
    names = {(topic.chat_id, topic.topic_id): topic.title for listed in topics.values() for topic in listed}
    titles = []
    for target in targets:
        title = target.chat.title
        if target.topic_id:
            title += f" / {names.get((target.chat.pk, target.topic_id), f'topic {target.topic_id}')}"
        titles.append(title)
    return titles


def saved_note(reminder: Reminder) -> str:
    if not reminder.enabled:
        return "It is off: switch it on to send on its schedule."
    if reminder.schedule_crontab or reminder.schedule_at:
        words = schedule_text(crontab=reminder.schedule_crontab, at=reminder.schedule_at, timezone=reminder.timezone)
        return f"{words} ({reminder.timezone})."
    return "It sends when you press Send now."


def panel_context(run: ReminderRun) -> dict:
    failed = []
    if run.failed and run.status not in IN_FLIGHT:
        failed = list(selectors.reminder_run_targets(run_id=run.pk, status=TargetStatus.FAILED)[:FAILED_SHOWN])
    move_accounts = selectors.accounts_to_move_to(run=run) if run.can_move else []
    return {"run": run, "failed_targets": failed, "move_accounts": move_accounts}


@dataclass(frozen=True)
class PartShown:
    part: PartSpec
    html: str  # the text or caption as Telegram shows it (safe: every character escaped)


def part_shown(spec: ReminderSpec) -> list[PartShown]:
    """The reminder's parts as they arrive: formatted; a part its account can no longer send (Premium lost) as
    written."""
    shown = []
    for part in spec.parts:
        try:
            html = formatted_html(part_formatted(part=part, premium=spec.account.is_premium))
        except FormatError:
            html = escape(part.caption if part.media or part.album else part.text)
        shown.append(PartShown(part=part, html=mark_safe(html)))
    return shown

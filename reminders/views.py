"""The Reminders pages (list, compose wizard, edit pages, detail) and Activity (every run).

The wizard is one form on one page: every step's fields stay in it (the steps not shown are hidden), so
nothing is lost going back and forth; each button posts the whole form and the page answers with the
form again (a step further, or with errors), the whole page without HTMX. The ETA panel beside it posts
the same form to `eta` whenever a field changes. Run rows and panels poll while their run is queued or
running and stop (HTTP 286) once it is not.
"""

from dataclasses import dataclass, replace
from datetime import datetime

from cron_descriptor import ExpressionDescriptor, Options
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect, HttpResponseStopPolling, reswap

from accounts.models import AuthState, TelegramAccount
from core import clock
from core.models import RunStatus
from reminders import selectors, services
from reminders.eta import FITS, LIKELY_TO_PAUSE, eta_estimate
from reminders.forms import SECTIONS, STEP_KEYS, STEPS, ReminderForm
from reminders.models import IN_FLIGHT, Reminder, ReminderRun, TargetStatus
from reminders.schedule import HORIZON_TEXT, local_hm, window_hours_errors, window_text, within_horizon, zone
from reminders.services import ReminderSpec, ReminderStateError

LIST = "reminders/list.html"
FORM = "reminders/form.html"
DETAIL = "reminders/detail.html"
ACTIVITY = "reminders/activity.html"
RUN = "reminders/run.html"
RUNS = "reminders/runs.html"  # the run row and run panel, shared by the detail and Activity pages
HISTORY_ROWS = 20
RUNS_PER_PAGE = 25
TARGETS_PER_PAGE = 100
FAILED_SHOWN = 5
ACTIVITY_FILTERS = {
    "running": ("Running", IN_FLIGHT),
    "paused": ("Paused", (RunStatus.PAUSED,)),
    "success": ("Success", (RunStatus.SUCCESS,)),
    "partial": ("Partial", (RunStatus.PARTIAL,)),
    "failed": ("Failed", (RunStatus.FAILED,)),
}
CRON_WORDS = Options()
CRON_WORDS.use_24hour_time_format = True


# Words and numbers for the pages ---------------------------------------------------------------------------------


def schedule_text(*, crontab: str, at: datetime | None, timezone: str) -> str:
    """The schedule as the operator would say it: "At 09:00, Monday through Friday"."""
    if crontab:
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


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


@dataclass(frozen=True)
class ReminderRow:
    reminder: Reminder
    schedule: str
    last_run: ReminderRun | None


def _reminder_row(reminder: Reminder, last_run: ReminderRun | None = None) -> ReminderRow:
    text = schedule_text(crontab=reminder.schedule_crontab, at=reminder.schedule_at, timezone=reminder.timezone)
    return ReminderRow(reminder=reminder, schedule=text, last_run=last_run)


def eta_context(spec: ReminderSpec | None) -> dict:
    """What the ETA panel shows for what the operator has entered so far; never an error page."""
    context = {"spec": spec}
    if spec is None:
        return {**context, "eta_note": "Choose the account that sends it to see how long it takes."}
    parts, targets = len(spec.parts), len(spec.targets)
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
        if not within_horizon(fire_at, now):
            return {**context, "eta_note": f"Pick a time within {HORIZON_TEXT} to see whether it fits."}
    else:
        fire_at, fire_label = now, "If sent now"
    rate = settings.REMINDER_MAX_SEND_PER_MINUTE
    estimate = eta_estimate(
        targets=targets,
        parts=parts,
        fire_at=fire_at,
        tz=tz,
        window_start_hour=spec.window_start_hour,
        window_end_hour=spec.window_end_hour,
        rate_per_minute=rate,
    )
    state = "fits" if estimate.label == FITS else "pause" if estimate.label == LIKELY_TO_PAUSE else "outside"
    local_fire = fire_at.astimezone(tz)
    return {
        **context,
        "eta": estimate,
        "eta_state": state,
        "eta_duration": duration_text(estimate.duration_minutes),
        "fire_label": fire_label,
        "fire_text": f"{local_fire:%a %-d %b}, {local_fire:%H:%M}",
        "finish_text": local_hm(estimate.finishes_at, tz),
        "finish_other_day": estimate.finishes_at.astimezone(tz).date() != local_fire.date(),
        "window_end_text": local_hm(estimate.window_end_at, tz) if estimate.window_end_at else "",
        "rate": rate,
    }


def _back(request, default: str) -> str:
    url = request.POST.get("next", "")
    if url and url_has_allowed_host_and_scheme(url, allowed_hosts={request.get_host()}):
        return url
    return default


def _go(request, url: str) -> HttpResponse:
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


def _reminder(pk: int) -> Reminder:
    return get_object_or_404(selectors.reminder_list(), pk=pk)


# Reminders ---------------------------------------------------------------------------------------------------------


@login_required
@require_GET
def reminder_list(request):
    reminders = list(selectors.reminder_list())
    last_runs = selectors.reminder_last_runs(reminder_ids=[reminder.pk for reminder in reminders])
    rows = [_reminder_row(reminder, last_runs.get(reminder.pk)) for reminder in reminders]
    return render(request, LIST, {"rows": rows})


def _list_row(request, reminder: Reminder, *, notice: str = "", notice_is_error: bool = False) -> HttpResponse:
    if not request.htmx:
        if notice:
            messages.add_message(request, messages.ERROR if notice_is_error else messages.SUCCESS, notice)
        return redirect("reminders:list")
    reminder = _reminder(reminder.pk)
    last_run = selectors.reminder_last_runs(reminder_ids=[reminder.pk]).get(reminder.pk)
    context = {"row": _reminder_row(reminder, last_run), "notice": notice, "notice_is_error": notice_is_error}
    return render(request, f"{LIST}#reminder-row", context)


@login_required
@require_POST
def reminder_set_enabled(request, pk: int):
    reminder = _reminder(pk)
    enabled = request.POST.get("enabled") == "on"
    spec = replace(selectors.reminder_spec(reminder=reminder), enabled=enabled)
    try:
        services.reminder_update(reminder=reminder, spec=spec)
    except ValidationError as exc:
        return _list_row(request, reminder, notice=" ".join(exc.messages), notice_is_error=True)
    return _list_row(request, reminder, notice="On: it sends on its schedule." if enabled else "Off: no more sends.")


@login_required
@require_POST
def reminder_send_now(request, pk: int):
    reminder = get_object_or_404(Reminder, pk=pk)
    detail = reverse("reminders:detail", args=[pk])
    try:
        run = services.reminder_fire(reminder=reminder)
    except ReminderStateError as exc:
        messages.error(request, str(exc))
        return _go(request, _back(request, detail))
    if run.status == RunStatus.FAILED:
        messages.error(request, f"Run #{run.pk} could not start. {run.error_summary}")
    else:
        messages.success(request, f"Run #{run.pk} is sending “{reminder}” to {_plural(run.total, 'group')}.")
    return _go(request, detail)


@login_required
@require_POST
def reminder_delete(request, pk: int):
    reminder = get_object_or_404(Reminder, pk=pk)
    try:
        services.reminder_delete(reminder=reminder)
    except ReminderStateError as exc:
        messages.error(request, str(exc))
        return _go(request, reverse("reminders:detail", args=[pk]))
    messages.success(request, f"“{reminder}” and its schedule are deleted; its runs stay in Activity.")
    return _go(request, reverse("reminders:list"))


@login_required
@require_GET
def reminder_detail(request, pk: int):
    reminder = _reminder(pk)
    history = list(selectors.reminder_run_list(reminder_id=pk)[:HISTORY_ROWS])
    open_runs = (
        list(selectors.reminder_run_filter(statuses=[*IN_FLIGHT, RunStatus.PAUSED], reminder_id=pk)) or history[:1]
    )
    tz = zone(reminder.timezone)
    next_fire = None
    if reminder.enabled and reminder.schedule_crontab:
        next_fire = selectors.reminder_next_fire_at(crontab=reminder.schedule_crontab, tz=tz, after=clock.now())
    elif reminder.enabled and reminder.schedule_at and reminder.schedule_at > clock.now():
        next_fire = reminder.schedule_at
    context = {
        **eta_context(selectors.reminder_spec(reminder=reminder)),
        "reminder": reminder,
        "part_list": list(reminder.parts.all()),
        "target_list": list(reminder.targets.all()),
        "history": history,
        "panels": [_panel_context(run) for run in open_runs],
        "next_fire": next_fire.astimezone(tz) if next_fire else None,
    }
    return render(request, DETAIL, context)


# Compose and edit -------------------------------------------------------------------------------------------------


def _compose_initial() -> dict:
    sender = (
        TelegramAccount.objects.filter(auth_state=AuthState.AUTHENTICATED, is_active=True)
        .order_by("display_name", "phone")
        .first()
    )
    latest = Reminder.objects.order_by("-created_at").first()
    return {
        "account": sender,
        "timezone": latest.timezone if latest else settings.TIME_ZONE,
        "window_start_hour": 9,
        "window_end_hour": 18,
        "schedule": "crontab",
        "crontab": "0 9 * * *",
        "enabled": True,
    }


def _form_page(request, form: ReminderForm, *, step: str, compose: bool, url: str, scroll: bool = False):
    reminder = form.reminder
    if compose:
        title, cancel_url = "New reminder", reverse("reminders:list")
    else:
        title = {"message": "Edit message", "groups": "Edit groups", "when": "Edit schedule"}[step]
        cancel_url = reverse("reminders:detail", args=[reminder.pk])
    spec = form.spec()
    index = STEP_KEYS.index(step)
    context = {
        "form": form,
        "step": step,
        "steps": [(key, label, i < index) for i, (key, label) in enumerate(STEPS)],
        "previous_step": STEP_KEYS[index - 1] if compose and index else "",
        "next_step": STEP_KEYS[index + 1] if compose and index + 1 < len(STEP_KEYS) else "",
        "next_label": STEPS[index + 1][1] if compose and index + 1 < len(STEPS) else "",
        "compose": compose,
        "form_url": url,
        "title": title,
        "cancel_url": cancel_url,
        "reminder": reminder,
        **eta_context(spec),
    }
    if not request.htmx:
        return render(request, FORM, context)
    response = render(request, f"{FORM}#reminder-form", context)
    # a new step starts at the top; a part added or uploaded stays where the operator is
    return reswap(response, "outerHTML show:window:top") if scroll else response


@login_required
@require_http_methods(["GET", "POST"])
def reminder_compose(request):
    url = reverse("reminders:compose")
    if request.method == "GET":
        form = ReminderForm(initial=_compose_initial())
        return _form_page(request, form, step="message", compose=True, url=url)
    form = ReminderForm(request.POST, request.FILES)
    step = request.POST.get("step", "")
    step = step if step in STEP_KEYS else "message"
    action = request.POST.get("action", "")
    form.apply(action)
    moved = False
    if action == "save":
        if form.check(SECTIONS):
            try:
                reminder = services.reminder_create(spec=form.spec())
            except ValidationError as exc:
                form.add_service_errors(exc)
            else:
                messages.success(request, f"“{reminder}” is saved. {_saved_note(reminder)}")
                return _go(request, reverse("reminders:detail", args=[reminder.pk]))
        step, moved = form.first_section_with_errors() or step, True
    elif action.startswith("goto-") and action[5:] in STEP_KEYS:
        target = action[5:]
        # Going forward checks every step before the one asked for; going back checks nothing.
        passed = [key for key in SECTIONS if STEP_KEYS.index(key) < STEP_KEYS.index(target)]
        if STEP_KEYS.index(target) > STEP_KEYS.index(step) and not form.check(passed):
            target = form.first_section_with_errors() or step
        step, moved = target, True
    return _form_page(request, form, step=step, compose=True, url=url, scroll=moved)


def _saved_note(reminder: Reminder) -> str:
    if not reminder.enabled:
        return "It is off: switch it on to send on its schedule."
    if reminder.schedule_crontab or reminder.schedule_at:
        words = schedule_text(crontab=reminder.schedule_crontab, at=reminder.schedule_at, timezone=reminder.timezone)
        return f"{words} ({reminder.timezone})."
    return "It sends when you press Send now."


@login_required
@require_http_methods(["GET", "POST"])
def reminder_edit(request, pk: int, section: str):
    if section not in SECTIONS:
        raise Http404
    reminder = _reminder(pk)
    url = reverse(f"reminders:edit-{section}", args=[pk])
    if request.method == "GET":
        form = ReminderForm(sections=[section], reminder=reminder)
        return _form_page(request, form, step=section, compose=False, url=url)
    form = ReminderForm(request.POST, request.FILES, sections=[section], reminder=reminder)
    action = request.POST.get("action", "")
    form.apply(action)
    if action == "save" and form.check():
        try:
            services.reminder_update(reminder=reminder, spec=form.spec())
        except ValidationError as exc:
            form.add_service_errors(exc)
        else:
            messages.success(request, f"“{reminder}” is saved.")
            return _go(request, reverse("reminders:detail", args=[pk]))
    return _form_page(request, form, step=section, compose=False, url=url)


@login_required
@require_POST
def reminder_eta(request):
    """The ETA panel for the form as it is now (the compose form, or an edit page with `reminder` and
    `section`); files are not stored here."""
    reminder_id = request.POST.get("reminder", "")
    if reminder_id:
        section = request.POST.get("section", "")
        if not reminder_id.isdecimal() or section not in SECTIONS:
            raise Http404
        form = ReminderForm(request.POST, sections=[section], reminder=_reminder(int(reminder_id)))
    else:
        form = ReminderForm(request.POST)
    return render(request, f"{FORM}#eta-panel", {"form": form, **eta_context(form.spec())})


# Runs --------------------------------------------------------------------------------------------------------------


def _panel_context(run: ReminderRun) -> dict:
    failed = []
    if run.failed and run.status not in IN_FLIGHT:
        failed = list(selectors.reminder_run_targets(run_id=run.pk, status=TargetStatus.FAILED)[:FAILED_SHOWN])
    return {"run": run, "failed_targets": failed}


def _polled(html: str, run: ReminderRun) -> HttpResponse:
    return HttpResponse(html) if run.status in IN_FLIGHT else HttpResponseStopPolling(html)


@login_required
@require_GET
def run_row(request, pk: int):
    """Polled every 2 s while the run is queued or running; HTTP 286 stops the polling once it is not."""
    run = get_object_or_404(selectors.reminder_run_list(), pk=pk)
    return _polled(render_to_string(f"{RUNS}#run-row", {"run": run}, request=request), run)


@login_required
@require_GET
def run_panel(request, pk: int):
    run = get_object_or_404(selectors.reminder_run_list(), pk=pk)
    return _polled(render_to_string(f"{RUNS}#run-panel", _panel_context(run), request=request), run)


def _run_action(request, pk: int, action, done) -> HttpResponse:
    """Resume, Cancel or Retry failed; answers with the run's row or panel (`as`), the outcome in it."""
    run = get_object_or_404(ReminderRun, pk=pk)
    try:
        run = action(run=run)
    except ReminderStateError as exc:
        notice, is_error = str(exc), True
    else:
        notice, is_error = done(run), False
    if not request.htmx:
        messages.add_message(request, messages.ERROR if is_error else messages.SUCCESS, f"Run #{pk}: {notice}")
        return redirect(_back(request, reverse("reminders:activity")))
    run = selectors.reminder_run_get(pk=pk)
    partial, other = ("run-panel", "run-row") if request.POST.get("as") == "panel" else ("run-row", "run-panel")
    context = {**_panel_context(run), "notice": notice, "notice_is_error": is_error}
    html = render_to_string(f"{RUNS}#{partial}", context, request=request)
    # The same run's row or panel elsewhere on the page (its history, the banner) changes with it, out of band;
    # a <template> lets a <tr> travel beside a <section>.
    also = render_to_string(f"{RUNS}#{other}", {**context, "notice": "", "oob_swap": True}, request=request)
    return HttpResponse(f"{html}<template>{also}</template>")


@login_required
@require_POST
def run_resume(request, pk: int):
    return _run_action(
        request, pk, services.reminder_run_resume, lambda run: f"Resumed: {_plural(run.pending, 'group')} to go."
    )


@login_required
@require_POST
def run_cancel(request, pk: int):
    return _run_action(
        request, pk, services.reminder_run_cancel, lambda run: f"Canceled: {_plural(run.skipped, 'group')} skipped."
    )


@login_required
@require_POST
def run_retry_failed(request, pk: int):
    return _run_action(
        request,
        pk,
        services.reminder_run_retry_failed,
        lambda run: f"Retrying {_plural(run.pending, 'failed group')}.",
    )


@login_required
@require_GET
def activity(request):
    key = request.GET.get("status", "")
    if key not in ACTIVITY_FILTERS:
        key = ""
    reminder = None
    reminder_id = request.GET.get("reminder", "")
    if reminder_id.isdecimal():
        reminder = Reminder.objects.filter(pk=reminder_id).first()
    statuses = ACTIVITY_FILTERS[key][1] if key else ()
    runs = selectors.reminder_run_filter(statuses=statuses, reminder_id=reminder.pk if reminder else None)
    counts = selectors.reminder_run_status_counts(reminder_id=reminder.pk if reminder else None)
    pills = [
        {"key": pill, "label": label, "count": sum(counts.get(status, 0) for status in pill_statuses)}
        for pill, (label, pill_statuses) in ACTIVITY_FILTERS.items()
    ]
    context = {
        "runs": Paginator(runs, RUNS_PER_PAGE).get_page(request.GET.get("page")),
        "status": key,
        "pills": pills,
        "total": sum(counts.values()),
        "reminder": reminder,
    }
    return render(request, ACTIVITY, context)


@login_required
@require_GET
def run_detail(request, pk: int):
    run = get_object_or_404(selectors.reminder_run_list(), pk=pk)
    status = request.GET.get("status", "")
    if status not in TargetStatus.values:
        status = ""
    targets = selectors.reminder_run_targets(run_id=pk, status=status or None).order_by("pk")
    context = {
        **_panel_context(run),
        "targets": Paginator(targets, TARGETS_PER_PAGE).get_page(request.GET.get("page")),
        "status": status,
        "statuses": TargetStatus.choices,
    }
    return render(request, RUN, context)

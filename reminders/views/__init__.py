"""The Reminders pages (list, compose wizard, edit pages, detail); Activity and the runs are in views/runs.py.

The wizard is one form on one page: every step's fields stay in it (the steps not shown are hidden), so
nothing is lost going back and forth; each button posts the whole form and the page answers with the
form again (a step further, or with errors), the whole page without HTMX. The ETA panel beside it posts
the same form to `eta` whenever a field changes.
"""

from dataclasses import replace

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect, reswap

from core import clock
from core.errors import OperatorError
from core.forms import error_text
from core.models import RunStatus
from reminders import selectors, services, trial_send
from reminders.forms import SECTIONS, STEP_KEYS, STEPS, ReminderForm
from reminders.models import ACTIVE, WAITING, PartFormat, Reminder
from reminders.presenters import (
    eta_context,
    panel_context,
    part_shown,
    plural,
    reminder_row,
    saved_note,
    send_now_context,
    target_titles,
)
from reminders.schedule import zone
from reminders.services import ReminderStateError

LIST = "reminders/list.html"
FORM = "reminders/form.html"
DETAIL = "reminders/detail.html"
HISTORY_ROWS = 20


def back_url(request, default: str) -> str:
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
    rows = [reminder_row(reminder, last_runs.get(reminder.pk)) for reminder in reminders]
    return render(request, LIST, {"rows": rows})


def _list_row(request, reminder: Reminder, *, notice: str = "", notice_is_error: bool = False) -> HttpResponse:
    if not request.htmx:
        if notice:
            messages.add_message(request, messages.ERROR if notice_is_error else messages.SUCCESS, notice)
        return redirect("reminders:list")
    reminder = _reminder(reminder.pk)
    last_run = selectors.reminder_last_runs(reminder_ids=[reminder.pk]).get(reminder.pk)
    context = {"row": reminder_row(reminder, last_run), "notice": notice, "notice_is_error": notice_is_error}
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
        return _list_row(request, reminder, notice=error_text(exc), notice_is_error=True)
    return _list_row(request, reminder, notice="On: it sends on its schedule." if enabled else "Off: no more sends.")


@login_required
@require_POST
def reminder_send_now(request, pk: int):
    reminder = _reminder(pk)
    detail = reverse("reminders:detail", args=[pk])
    # The operator confirmed what the page said then ("now", or "when the window opens"); a window that opened
    # or closed since must not turn one into the other.
    confirmed = request.POST.get("waits", "")
    again = bool(request.POST.get("again"))  # the operator confirmed a second run to every group
    if confirmed and not again and (confirmed == "yes") != send_now_context(reminder)["send_waits"]:
        messages.error(
            request, "The delivery window opened or closed since this page was shown; check and press again."
        )
        return _go(request, back_url(request, detail))
    try:
        run = services.reminder_fire(reminder=reminder, again=again)
    except services.ReminderRunActive as exc:
        messages.error(request, str(exc))
        return _go(request, detail)
    except ReminderStateError as exc:
        messages.error(request, str(exc))
        return _go(request, back_url(request, detail))
    if run.status == RunStatus.FAILED:
        messages.error(request, f"Run #{run.pk} could not start. {run.error_summary}")
    elif run.status == WAITING:
        messages.success(request, f"Run #{run.pk} waits for the delivery window. {run.error_summary}")
    else:
        messages.success(request, f"Run #{run.pk} is sending “{reminder}” to {plural(run.total, 'group')}.")
    return _go(request, detail)


@login_required
@require_POST
def reminder_test_send(request, pk: int):
    """Send me a test: the answer says where it went and when, or why it did not."""
    reminder = _reminder(pk)
    context = {"reminder": reminder}
    try:
        context["notice"] = trial_send.reminder_test_send(reminder=reminder).summary
    except OperatorError as exc:
        context.update(notice=str(exc), notice_is_error=True)
    return render(request, f"{DETAIL}#test-send", context)


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
    active = list(selectors.reminder_run_filter(statuses=ACTIVE, reminder_id=pk))
    open_runs = active or history[:1]
    tz = zone(reminder.timezone)
    next_fire = None
    if reminder.enabled and reminder.schedule_crontab:
        next_fire = selectors.reminder_next_fire_at(crontab=reminder.schedule_crontab, tz=tz, after=clock.now())
    elif reminder.enabled and reminder.schedule_at and reminder.schedule_at > clock.now():
        next_fire = reminder.schedule_at
    spec = selectors.reminder_spec(reminder=reminder)
    context = {
        **eta_context(spec),
        **send_now_context(reminder, active=active[0] if active else None),
        "reminder": reminder,
        "part_list": part_shown(spec),
        "target_titles": target_titles(list(reminder.targets.all())),
        "history": history,
        "panels": [panel_context(run) for run in open_runs],
        # a run's action refreshes its other rendering out of band only where the page has it
        "row_ids": {run.pk for run in history},
        "panel_ids": {run.pk for run in open_runs},
        "next_fire": next_fire.astimezone(tz) if next_fire else None,
    }
    return render(request, DETAIL, context)


# Compose and edit -------------------------------------------------------------------------------------------------


def _compose_initial() -> dict:
    sender = selectors.default_sender()
    latest = Reminder.objects.order_by("-created_at").first()
    return {
        "account": sender,
        "timezone": latest.timezone if latest else settings.TIME_ZONE,
        "window_start_hour": 9,
        "window_end_hour": 18,
        "schedule": "crontab",
        "crontab": "0 9 * * *",
        "enabled": True,
        "link_preview": True,
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
        "part_formats": PartFormat.choices,
        **eta_context(spec, draft_parts=len(form.part_rows)),
        "target_titles": target_titles(spec.targets) if spec else [],
        "part_list": part_shown(spec) if spec else [],  # Review: the parts as they arrive, formatted
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
                messages.success(request, f"“{reminder}” is saved. {saved_note(reminder)}")
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
    """The ETA panel for the form as it is now."""
    form = _posted_form(request)
    context = {"form": form, **eta_context(form.spec(), draft_parts=len(form.part_rows))}
    return render(request, f"{FORM}#eta-panel-body", context)


@login_required
@require_POST
def reminder_part_preview(request):
    """One part of the form as it is now, as Telegram will show it (or why Telegram would refuse it)."""
    form = _posted_form(request)
    index = request.POST.get("preview", "")
    if not index.isdecimal() or int(index) >= len(form.part_rows):
        raise Http404
    row = form.part_rows[int(index)]
    return render(request, f"{FORM}#part-preview-body", {"row": row})


def _posted_form(request) -> ReminderForm:
    """The compose form as posted, or an edit page's (with `reminder` and `section`); files are not stored."""
    reminder_id = request.POST.get("reminder", "")
    if reminder_id:
        section = request.POST.get("section", "")
        if not reminder_id.isdecimal() or section not in SECTIONS:
            raise Http404
        return ReminderForm(request.POST, sections=[section], reminder=_reminder(int(reminder_id)))
    return ReminderForm(request.POST)

"""The Accounts page: the list, the login dialogs (phone, code, 2FA password), refresh chats, switch off, delete.

Every dialog request targets #dialog-slot. Its response holds the next dialog (or nothing, which closes
it) and, out of band, the account's row in its new state.
"""

from typing import NamedTuple

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts import ingest_limits, pace, selectors, services
from accounts.forms import CodeForm, IngestLimitsForm, PasswordForm, PhoneForm
from accounts.models import AuthState, TelegramAccount
from core.forms import error_text
from core.security import console_logins, cooloff_minutes
from core.security import login_unlock as login_unlock_service
from core.sizes import size_text
from telegram.errors import LoginError

PAGE = "accounts/list.html"


class LoginStep(NamedTuple):
    dialog: str
    form_class: type[forms.Form]
    url_name: str


NEXT_STEP = {
    AuthState.AWAITING_CODE: LoginStep("code-dialog", CodeForm, "accounts:code"),
    AuthState.AWAITING_PASSWORD: LoginStep("password-dialog", PasswordForm, "accounts:password"),
}


def _show_error(form: forms.Form, exc: Exception, *, field: str) -> None:
    """A wrong code, password or phone belongs under its field; anything else above the form."""
    form.add_error(field if isinstance(exc, LoginError | ValidationError) else None, error_text(exc))


def _dialog(request, name: str, **context) -> HttpResponse:
    """One dialog for HTMX; otherwise the whole page with that dialog open."""
    if request.htmx:
        return render(request, f"{PAGE}#{name}", context)
    accounts = selectors.accounts_with_health(selectors.account_list())
    return render(request, PAGE, {"accounts": accounts, "dialog": name, **_logins_context(), **context})


def _after_login_step(request, account: TelegramAccount, *, added: bool = False) -> HttpResponse:
    """Open the next step's dialog, or close the dialog once logged in, and show the account's new row."""
    step = NEXT_STEP.get(account.auth_state)
    if not request.htmx:
        return redirect(step.url_name, pk=account.pk) if step else redirect("accounts:list")
    context = {"account": selectors.account_get(pk=account.pk), "form": step.form_class() if step else None}
    parts = [step.dialog] if step else []
    parts.append("account-row-added" if added else "account-row-replaced")
    return HttpResponse("".join(render_to_string(f"{PAGE}#{part}", context, request=request) for part in parts))


@login_required
@require_GET
def account_list(request):
    return render(
        request, PAGE, {"accounts": selectors.accounts_with_health(selectors.account_list()), **_logins_context()}
    )


def _logins_context(notice: str = "") -> dict:
    return {
        "logins": console_logins(),
        "login_notice": notice,
        "failure_limit": settings.AXES_FAILURE_LIMIT,
        "cooloff_minutes": cooloff_minutes(),
    }


@login_required
@require_POST
def login_unlock(request):
    """An operator frees a console login that throttling locked out."""
    username = request.POST.get("username", "")
    reset = login_unlock_service(username=username) if username else 0
    notice = f"{username} can log in again." if reset else f"{username or 'That login'} was not locked out."
    if not request.htmx:
        messages.success(request, notice)
        return redirect("accounts:list")
    return render(request, f"{PAGE}#console-logins", _logins_context(notice))


@login_required
@require_http_methods(["GET", "POST"])
def account_add(request):
    form = PhoneForm(request.POST or None)
    if form.is_valid():
        try:
            account = services.account_add(phone=form.cleaned_data["phone"])
        except services.OPERATOR_ERRORS as exc:
            _show_error(form, exc, field="phone")
        else:
            return _after_login_step(request, account, added=True)
    return _dialog(request, "phone-dialog", form=form)


@login_required
@require_POST
def account_send_code(request, pk: int):
    account = get_object_or_404(TelegramAccount, pk=pk)
    try:
        account = services.account_send_code(account=account)
    except services.OPERATOR_ERRORS as exc:
        return _dialog(request, "notice-dialog", account=account, title="No login code sent", message=error_text(exc))
    return _after_login_step(request, account)


def _sign_in_step(request, pk: int, *, form_class, field: str, dialog: str):
    """The login code or the 2FA password: one form field, handed to the sign-in as the same keyword."""
    account = get_object_or_404(TelegramAccount, pk=pk)
    form = form_class(request.POST or None)
    if form.is_valid():
        try:
            account = services.account_sign_in(account=account, **{field: form.cleaned_data[field]})
        except services.OPERATOR_ERRORS as exc:
            _show_error(form, exc, field=field)
        else:
            return _after_login_step(request, account)
    return _dialog(request, dialog, account=account, form=form)


@sensitive_post_parameters("code")
@login_required
@require_http_methods(["GET", "POST"])
def account_code(request, pk: int):
    return _sign_in_step(request, pk, form_class=CodeForm, field="code", dialog="code-dialog")


@sensitive_post_parameters("password")
@login_required
@require_http_methods(["GET", "POST"])
def account_password(request, pk: int):
    return _sign_in_step(request, pk, form_class=PasswordForm, field="password", dialog="password-dialog")


@login_required
@require_POST
def account_refresh_chats(request, pk: int):
    account = get_object_or_404(TelegramAccount, pk=pk)
    try:
        found = services.account_refresh_chats(account=account)
    except services.OPERATOR_ERRORS as exc:
        notice, notice_is_error = error_text(exc), True
    else:
        people = f" and {found.people} {'person' if found.people == 1 else 'people'}" if found.people else ""
        notice, notice_is_error = f"Found {found.chats} chat{'' if found.chats == 1 else 's'}{people}.", False
    if not request.htmx:
        messages.add_message(request, messages.ERROR if notice_is_error else messages.SUCCESS, f"{account}: {notice}")
        return redirect("accounts:list")
    context = {"account": selectors.account_get(pk=pk), "notice": notice, "notice_is_error": notice_is_error}
    return render(request, f"{PAGE}#account-row", context)


def _row_or_list(request, pk: int, notice: str, *, notice_is_error: bool = False) -> HttpResponse:
    if not request.htmx:
        messages.add_message(request, messages.ERROR if notice_is_error else messages.SUCCESS, notice)
        return redirect("accounts:list")
    context = {"account": selectors.account_get(pk=pk), "notice": notice, "notice_is_error": notice_is_error}
    return render(request, f"{PAGE}#account-row", context)


@login_required
@require_POST
def account_delete(request, pk: int):
    account = get_object_or_404(TelegramAccount, pk=pk)
    try:
        services.account_delete(account=account)
    except services.AccountHasHistory as exc:
        return _row_or_list(request, pk, str(exc), notice_is_error=True)
    if request.htmx:
        return HttpResponse("")  # the row is swapped for nothing
    messages.success(request, f"Deleted {account.phone}.")
    return redirect("accounts:list")


@login_required
@require_POST
def account_set_active(request, pk: int):
    account = get_object_or_404(TelegramAccount, pk=pk)
    active = request.POST.get("is_active") == "on"
    services.account_set_active(account=account, active=active)
    notice = "Switched on." if active else "Switched off: it neither ingests nor sends; its history stays."
    return _row_or_list(request, pk, notice)


@login_required
@require_POST
def account_sending(request, pk: int):
    """The "stop all sending for this account now" switch, and allowing it again."""
    account = get_object_or_404(TelegramAccount, pk=pk)
    stopped = request.POST.get("stop") == "1"
    pace.account_sending_set(account=account, stopped=stopped)
    notice = (
        "Sending stopped: every run of it pauses at its next message."
        if stopped
        else "Sending allowed: the runs the stop paused go on."
    )
    return _row_or_list(request, pk, notice)


def _rest_action(request, pk: int, action, done) -> HttpResponse:
    account = get_object_or_404(TelegramAccount, pk=pk)
    resumes = account.rest_resumes_runs
    try:
        action(account=account)
    except pace.AccountNotResting as exc:
        return _row_or_list(request, pk, str(exc), notice_is_error=True)
    return _row_or_list(request, pk, done(resumes))


@login_required
@require_POST
def account_rest_end(request, pk: int):
    return _rest_action(
        request,
        pk,
        pace.account_rest_end_now,
        lambda resumes: "Rest ended" + (": its paused runs go on." if resumes else "; its runs stay paused."),
    )


@login_required
@require_POST
def account_rest_keep_paused(request, pk: int):
    return _rest_action(
        request,
        pk,
        pace.account_rest_keep_runs_paused,
        lambda resumes: "Its runs stay paused after the rest; resume them from Activity.",
    )


@login_required
@require_http_methods(["GET", "POST"])
def account_ingest_limits(request, pk: int):
    """The account's ingestion hours and bandwidth cap, in a dialog; what was typed stays beside its error."""
    account = get_object_or_404(TelegramAccount, pk=pk)
    bandwidth = size_text(account.ingest_bytes_per_second) + "/s" if account.ingest_bytes_per_second else ""
    initial = {
        "ingest_start_hour": account.ingest_start_hour,
        "ingest_end_hour": account.ingest_end_hour,
        "ingest_timezone": account.ingest_timezone,
        "ingest_bandwidth": bandwidth,
    }
    form = IngestLimitsForm(request.POST or None, initial=initial)
    if form.is_valid():
        values = form.cleaned_data
        try:
            limits = ingest_limits.ingest_limits_clean(
                start_hour=values["ingest_start_hour"],
                end_hour=values["ingest_end_hour"],
                timezone_name=values["ingest_timezone"],
                bandwidth=values["ingest_bandwidth"],
            )
        except ValidationError as exc:
            for field, errors in exc.message_dict.items():
                form.add_error(field, errors)
        else:
            ingest_limits.account_ingest_limits_set(account=account, limits=limits)
            notice = (
                f"Ingestion hours {ingest_limits.account_ingest_hours_text(account=account)}, "
                f"bandwidth {ingest_limits.account_bandwidth_text(account=account)}."
            )
            if not request.htmx:
                messages.success(request, f"{account}: {notice}")
                return redirect("accounts:list")
            context = {"account": selectors.account_get(pk=pk), "notice": notice}
            return HttpResponse(render_to_string(f"{PAGE}#account-row-replaced", context, request=request))
    return _dialog(request, "ingest-limits-dialog", account=account, form=form)

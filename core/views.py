from functools import partial

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model, login, update_session_auth_hash
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views import defaults
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from core import notifications, people, selectors, tokens
from core.errors import OperatorError
from core.forms import ApiTokenForm, AuditFilterForm, InviteAcceptForm, PersonAddForm, error_text
from core.models import ApiToken, Invite, Notification, Role
from core.roles import is_operator, operator_required

NOTIFICATIONS_PAGE = "core/notifications.html"
NOTIFICATIONS_PER_PAGE = 50
PANEL_SIZE = 8


# Audit trail ------------------------------------------------------------------------------------------
# Viewers read it too (docs/decisions.md); the addresses are shown to operators only.

AUDIT_PAGE = "core/audit.html"
AUDIT_PER_PAGE = 50


@login_required
@require_GET
def audit_list(request):
    form = AuditFilterForm(request.GET or None)
    filters = form.cleaned_data if form.is_valid() else {}
    entries = selectors.audit_entries(**{name: value for name, value in filters.items() if value})
    page = Paginator(entries, AUDIT_PER_PAGE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "form": form,
        "page": page,
        "query": query.urlencode(),
        "kinds": selectors.audit_kinds(),
        "show_address": is_operator(request.user),
    }
    template = f"{AUDIT_PAGE}#audit-table" if request.htmx else AUDIT_PAGE
    return render(request, template, context)


# API tokens: each person manages their own; operators see everyone's and can revoke them ----------------

TOKENS_PAGE = "core/tokens.html"


def _token_form(request, data=None) -> ApiTokenForm:
    return ApiTokenForm(
        data,
        operator=is_operator(request.user),
        default_days=settings.API_TOKEN_DEFAULT_DAYS,
        max_days=settings.API_TOKEN_MAX_DAYS,
    )


def _tokens_answer(request, *, form: ApiTokenForm, made: ApiToken | None = None, secret: str = "", status: int = 200):
    context = {
        "form": form,
        "tokens": tokens.api_tokens_visible(user=request.user),
        "made": made,
        "secret": secret,
        "everyone": is_operator(request.user),
    }
    template = f"{TOKENS_PAGE}#tokens-body" if request.htmx else TOKENS_PAGE
    return render(request, template, context, status=status)


@login_required
@require_GET
def token_list(request):
    return _tokens_answer(request, form=_token_form(request))


@login_required
@require_POST
def token_create(request):
    """The secret is in this answer only: a page reload shows the list without it."""
    form = _token_form(request, request.POST)
    if not form.is_valid():
        return _tokens_answer(request, form=form, status=400)
    try:
        made, secret = tokens.api_token_create(owner=request.user, **form.cleaned_data)
    except ValidationError as exc:
        for field_name, messages_ in exc.message_dict.items():
            form.add_error(field_name if field_name in form.fields else None, messages_)
        return _tokens_answer(request, form=form, status=400)
    except OperatorError as exc:
        form.add_error(exc.field, exc.message)
        return _tokens_answer(request, form=form, status=403)
    return _tokens_answer(request, form=_token_form(request), made=made, secret=secret)


@login_required
@require_POST
def token_revoke(request, pk: int):
    token = tokens.api_token_revoke(token=get_object_or_404(tokens.api_tokens_visible(user=request.user), pk=pk))
    if not request.htmx:
        messages.success(request, f"Revoked {token}.")
        return redirect("tokens")
    return _tokens_answer(request, form=_token_form(request))


# Notifications ------------------------------------------------------------------------------------------


def _next_url(request, default: str) -> str:
    target = request.POST.get("next") or request.GET.get("next") or ""
    if url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return target
    return default


@login_required
def notification_list(request):
    unread_only = request.GET.get("unread") == "1"
    page = Paginator(selectors.notification_list(unread_only=unread_only), NOTIFICATIONS_PER_PAGE).get_page(
        request.GET.get("page")
    )
    return render(
        request,
        NOTIFICATIONS_PAGE,
        {"page": page, "unread_only": unread_only, "notifications_unread": selectors.notifications_unread_count()},
    )


@login_required
@require_GET
def notification_bell(request):
    """The unread count in the navigation; polled every 30 s."""
    context = {
        "notifications_unread": selectors.notifications_unread_count(),
        "notifications_latest": selectors.notification_latest_unread(),
    }
    return render(request, f"{NOTIFICATIONS_PAGE}#bell-count", context)


@login_required
@require_GET
def notification_panel(request):
    """The bell's drop-down: the latest notifications, unread first."""
    return _panel_response(request)


@login_required
@require_POST
def notification_read(request, pk: int):
    notification = notifications.notification_mark_read(notification=get_object_or_404(Notification, pk=pk))
    if not request.htmx:
        return redirect(_next_url(request, "notifications"))
    # The item in its read state, and the bell's new count out of band.
    item = render_to_string(f"{NOTIFICATIONS_PAGE}#notification-item", {"notification": notification}, request)
    count = render_to_string(
        f"{NOTIFICATIONS_PAGE}#bell-count",
        {"notifications_unread": selectors.notifications_unread_count(), "oob_count": True},
        request,
    )
    return HttpResponse(item + count)


@login_required
@require_POST
def notifications_read_all(request):
    notifications.notifications_mark_all_read()
    if not request.htmx:
        return redirect(_next_url(request, "notifications"))
    return _panel_response(request)


def _panel_response(request):
    return render(
        request,
        f"{NOTIFICATIONS_PAGE}#bell-panel",
        {
            "panel_items": selectors.notification_panel(limit=PANEL_SIZE),
            "notifications_unread": selectors.notifications_unread_count(),
            "oob_count": True,
        },
    )


# Error pages (settings.DEBUG off): the API answers JSON with a message, like its views do; a person gets the
# console's own page, with its navigation and a way back ------------------------------------------------------

ERROR_PAGE = "core/error.html"


def _error(request, *, status: int, title: str, message: str, api_message: str | None = None):
    if request.path.startswith("/api/"):
        return JsonResponse({"message": api_message or message}, status=status)
    context = {"status": status, "title": title, "message": message}
    return render(request, ERROR_PAGE, context, status=status)


def bad_request(request, exception):
    return _error(
        request,
        status=400,
        title="This request cannot be read",
        message="The address or the form sent was not understood. Go back, reload the page and try again.",
        api_message="The request cannot be read.",
    )


def permission_denied(request, exception):
    return _error(
        request,
        status=403,
        title="Not allowed",
        message=str(exception) or "Your login may not open this page; ask an operator if you need it.",
    )


def not_found(request, exception):
    return _error(
        request,
        status=404,
        title="Nothing here",
        message="This page does not exist, or what it showed was deleted.",
        api_message="Nothing here; the API's addresses are listed at /api/docs/.",
    )


def server_error(request):
    try:
        return _error(
            request,
            status=500,
            title="Stashcast failed to answer",
            message="The error was logged for whoever runs this console. Reload the page to try again.",
            api_message="Stashcast failed to answer; the error was logged.",
        )
    except Exception:  # the page itself needs the database; when that is what failed, Django's plain page
        return defaults.server_error(request)


class LogoutView(auth_views.LogoutView):
    """Log out, and say so on the login page that follows."""

    def post(self, request, *args, **kwargs):
        response = super().post(request, *args, **kwargs)
        messages.info(request, "You are logged out.")
        return response


# People (operators only) and the page an invite link opens (anyone with the link) ----------------------------

PEOPLE_PAGE = "core/people.html"
INVITE_PAGE = "core/invite.html"
PEOPLE_OPERATORS_ONLY = "People is for operators; ask one to add or change a login."


def _people_page(request, *, form=None, shown=None, error="", status=200):
    context = {
        "people": people.people_list(),
        "invites": people.invites_pending(),
        "form": form or PersonAddForm(),
        "roles": Role.choices,
        "shown": shown,
        "error": error,
        "me": request.user.pk,
    }
    return render(request, PEOPLE_PAGE, context, status=status)


def _invite_link(request, token: str) -> str:
    return request.build_absolute_uri(reverse("invite", args=[token]))


def _person(pk: int):
    return get_object_or_404(get_user_model(), pk=pk)


@login_required
@operator_required(PEOPLE_OPERATORS_ONLY)
@require_GET
def people_list(request):
    return _people_page(request)


@login_required
@operator_required(PEOPLE_OPERATORS_ONLY)
@require_POST
def person_add(request):
    """Add a login: `how` says by invite link or with a password; the link or the password is shown once."""
    form = PersonAddForm(request.POST)
    if not form.is_valid():
        return _people_page(request, form=form, status=400)
    data = form.cleaned_data
    try:
        if request.POST.get("how") == "password":
            added, password = people.login_add(username=data["username"], role=data["role"], added_by=request.user)
            shown = {"what": "password", "username": added.get_username(), "secret": password}
        else:
            invite, token = people.invite_create(
                role=data["role"],
                username=data["username"],
                expires_in_days=data["expires_in_days"],
                created_by=request.user,
            )
            shown = {"what": "invite", "invite": invite, "secret": _invite_link(request, token)}
    except ValidationError as exc:
        for name, errors in exc.message_dict.items():
            form.add_error(name if name in form.fields else None, errors)
        return _people_page(request, form=form, status=400)
    return _people_page(request, shown=shown)


def _changed(request, change, notice: str):
    """A change without a secret to show: back to the page (or the page with the reason it was refused)."""
    try:
        change()
    except (OperatorError, ValidationError) as exc:
        status = exc.status if isinstance(exc, OperatorError) else 400
        return _people_page(request, error=error_text(exc), status=status)
    messages.success(request, notice)
    return redirect("people")


@login_required
@operator_required(PEOPLE_OPERATORS_ONLY)
@require_POST
def person_role(request, pk: int):
    person = _person(pk)
    role = request.POST.get("role", "")
    label = dict(Role.choices).get(role, role)
    change = partial(people.login_role_change, login=person, role=role, by=request.user)
    return _changed(request, change, f"{person.get_username()} is now {label.lower()}.")


@login_required
@operator_required(PEOPLE_OPERATORS_ONLY)
@require_POST
def person_deactivate(request, pk: int):
    person = _person(pk)
    change = partial(people.login_deactivate, login=person, by=request.user)
    return _changed(request, change, f"{person.get_username()} is deactivated and logged out everywhere.")


@login_required
@operator_required(PEOPLE_OPERATORS_ONLY)
@require_POST
def person_reactivate(request, pk: int):
    person = _person(pk)
    change = partial(people.login_reactivate, login=person)
    return _changed(request, change, f"{person.get_username()} can log in again.")


@login_required
@operator_required(PEOPLE_OPERATORS_ONLY)
@require_POST
def person_password(request, pk: int):
    """A new password (shown once), or a link with which the person chooses one (`how=link`)."""
    person = _person(pk)
    try:
        if request.POST.get("how") == "link":
            invite, token = people.invite_for_password(login=person, created_by=request.user)
            shown = {"what": "reset", "invite": invite, "secret": _invite_link(request, token)}
        else:
            password = people.login_password_reset(login=person)
            if person.pk == request.user.pk:  # their other sessions end, not the one they are using
                update_session_auth_hash(request, people.login_reloaded(login=person))
            shown = {"what": "password", "username": person.get_username(), "secret": password}
    except OperatorError as exc:
        return _people_page(request, error=exc.message, status=exc.status)
    return _people_page(request, shown=shown)


@login_required
@operator_required(PEOPLE_OPERATORS_ONLY)
@require_POST
def invite_revoke(request, pk: int):
    invite = get_object_or_404(Invite, pk=pk)
    people.invite_revoke(invite=invite)
    messages.success(request, "The link no longer works.")
    return redirect("people")


@sensitive_post_parameters("password", "password_again")
@require_http_methods(["GET", "POST"])
def invite_accept(request, token: str):
    """Open to anyone holding the link: choose a password (and a login name unless preset), then logged in."""
    try:
        invite = people.invite_open(token=token)
    except OperatorError as exc:
        return render(request, INVITE_PAGE, {"refused": exc.message}, status=exc.status)
    form = InviteAcceptForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            person = people.invite_accept(
                token=token, username=form.cleaned_data["username"], password=form.cleaned_data["password"]
            )
        except OperatorError as exc:
            return render(request, INVITE_PAGE, {"refused": exc.message}, status=exc.status)
        except ValidationError as exc:
            for name, errors in exc.message_dict.items():
                form.add_error(name if name in form.fields else None, errors)
        else:
            request.session.flush()  # whoever was logged in on this browser is not this person
            login(request, person, backend="django.contrib.auth.backends.ModelBackend")
            messages.success(request, f"Welcome, {person.get_username()}. Your password is set.")
            return redirect("dashboard")
    status = 400 if request.method == "POST" else 200
    return render(request, INVITE_PAGE, {"invite": invite, "form": form}, status=status)

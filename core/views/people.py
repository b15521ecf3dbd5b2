"""The People page (operators only: logins, their roles and passwords, invite links) and the page an invite link
opens (anyone with the link)."""

from functools import partial

from django.contrib import messages
from django.contrib.auth import get_user_model, login, update_session_auth_hash
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from core import people
from core.errors import OperatorError
from core.forms import InviteAcceptForm, PersonAddForm, error_text
from core.models import Invite, Role
from core.roles import operator_required

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

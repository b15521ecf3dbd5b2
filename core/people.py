"""People: the console's logins, managed by operators (the People page, /api/people/, `create_login`).

A login is added with a password shown once, or by an invite link the person opens to choose their username (unless
preset) and password; the link works once, until it expires. Only the hash of a link's secret is kept. A password is
reset the same two ways. Logins are deactivated, never deleted, so the audit trail keeps naming them. The last active
operator cannot be demoted or deactivated: the console would have nobody left to manage it.
"""

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.contrib.auth import SESSION_KEY, get_user_model
from django.contrib.auth.models import Group
from django.contrib.auth.password_validation import validate_password
from django.contrib.sessions.models import Session
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from core.errors import OperatorError
from core.locks import advisory_xact_lock
from core.models import Invite, LoginOrigin, Role
from core.roles import OPERATORS_GROUP, is_operator

PEOPLE = "people"  # the advisory lock namespace: one change of roles or activity at a time
INVITE_DAYS_MAX = 30
PASSWORD_CHARS = 16
_TAKEN = "A login named {name!r} already exists; pick another name."


class InviteUnusable(OperatorError):
    """The link was used, revoked, has expired, or never existed: 410, the page says which."""

    status = 410


@dataclass(frozen=True)
class Person:
    pk: int
    username: str
    role: str
    is_active: bool
    last_login: datetime | None
    added_by: str | None
    added_how: str | None


def _users():
    return get_user_model().objects


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _role_of(login) -> str:
    return Role.OPERATOR if is_operator(login) else Role.VIEWER


# Selectors ---------------------------------------------------------------------------------------------------


def people_list() -> list[Person]:
    """Every login, operators first, with who added it."""
    logins = _users().prefetch_related("groups").select_related("origin__added_by").order_by("username")
    people = [person_of(login=login) for login in logins]
    return sorted(people, key=lambda person: (person.role != Role.OPERATOR, not person.is_active, person.username))


def _group_names(login) -> set[str]:
    """From the prefetched groups when listing (is_operator would ask the database once a login)."""
    return {group.name for group in login.groups.all()}


def person_of(*, login) -> Person:
    origin = getattr(login, "origin", None)  # none for logins made before People, or in the admin
    return Person(
        pk=login.pk,
        username=login.get_username(),
        # From the prefetched groups when listing (is_operator would ask the database once a login).
        role=Role.OPERATOR
        if login.is_superuser or OPERATORS_GROUP in {g.name for g in login.groups.all()}
        else Role.VIEWER,
        is_active=login.is_active,
        last_login=login.last_login,
        added_by=origin.added_by.get_username() if origin and origin.added_by_id else None,
        added_how=origin.how if origin else None,
    )


def login_reloaded(*, login):
    return _users().get(pk=login.pk)


def invites_pending() -> list[Invite]:
    """Links not used, revoked nor expired, newest first."""
    return list(
        Invite.objects.filter(used_at__isnull=True, revoked_at__isnull=True, expires_at__gt=timezone.now())
        .select_related("login", "created_by")
        .order_by("-created_at", "-pk")
    )


def operators_active():
    return _users().filter(is_active=True).filter(Q(is_superuser=True) | Q(groups__name=OPERATORS_GROUP)).distinct()


# Adding logins -------------------------------------------------------------------------------------------------


def _username_clean(username: str) -> str:
    username = (username or "").strip()
    model = get_user_model()
    if not username:
        raise ValidationError({"username": ["Give the login a name (letters, digits and @ . + - _)."]})
    try:
        model.username_validator(username)
    except ValidationError as exc:
        raise ValidationError({"username": exc.messages}) from None
    limit = model._meta.get_field(model.USERNAME_FIELD).max_length
    if len(username) > limit:
        raise ValidationError({"username": [f"A login name has at most {limit} characters."]})
    if _users().filter(**{f"{model.USERNAME_FIELD}__iexact": username}).exists():
        raise ValidationError({"username": [_TAKEN.format(name=username)]})
    return username


def _role_clean(role: str) -> str:
    if role not in Role.values:
        raise ValidationError({"role": [f"Choose a role: {' or '.join(Role.values)}."]})
    return role


def _days_clean(days) -> int:
    if not isinstance(days, int) or isinstance(days, bool) or not 1 <= days <= INVITE_DAYS_MAX:
        raise ValidationError({"expires_in_days": [f"A link lasts 1 to {INVITE_DAYS_MAX} days."]})
    return days


def _role_apply(*, login, role: str) -> None:
    group = Group.objects.get_or_create(name=OPERATORS_GROUP)[0]
    if role == Role.OPERATOR:
        login.groups.add(group)
    else:
        login.groups.remove(group)
        if login.is_superuser or login.is_staff:  # a superuser is an operator whatever their groups
            login.is_superuser = login.is_staff = False
            login.save(update_fields=["is_superuser", "is_staff"])
    login.__dict__.pop("_is_operator", None)


def _password_new() -> str:
    return secrets.token_urlsafe(PASSWORD_CHARS)[:PASSWORD_CHARS]


@transaction.atomic
def login_add(*, username: str, role: str, added_by=None, how: str = LoginOrigin.How.PASSWORD) -> tuple[object, str]:
    """A login with a password made here, returned once (to show, never stored in clear)."""
    username, role = _username_clean(username), _role_clean(role)
    password = _password_new()
    return _login_create(username=username, password=password, role=role, added_by=added_by, how=how), password


def _login_create(*, username: str, password: str, role: str, added_by, how: str):
    try:
        with transaction.atomic():
            login = _users().create_user(username=username, password=password)
    except IntegrityError:  # the same name taken at the same moment
        raise ValidationError({"username": [_TAKEN.format(name=username)]}) from None
    _role_apply(login=login, role=role)
    LoginOrigin.objects.create(login=login, added_by=added_by, how=how)
    return login


def _invite_make(**fields) -> tuple[Invite, str]:
    token = secrets.token_urlsafe(32)
    invite = Invite.objects.create(token_hash=_token_hash(token), **fields)
    return invite, token


def invite_create(*, role: str, created_by, username: str = "", expires_in_days: int = 7) -> tuple[Invite, str]:
    """A link for a new login; returns the invite and its secret (for the link, shown once)."""
    role, days = _role_clean(role), _days_clean(expires_in_days)
    username = _username_clean(username) if (username or "").strip() else ""
    return _invite_make(
        purpose=Invite.Purpose.NEW_LOGIN,
        role=role,
        username=username,
        created_by=created_by,
        expires_at=timezone.now() + timedelta(days=days),
    )


def invite_for_password(*, login, created_by, expires_in_days: int = 1) -> tuple[Invite, str]:
    """A link with which `login`'s person chooses a new password; their old one works until then."""
    days = _days_clean(expires_in_days)
    if not login.is_active:
        raise OperatorError(f"{login.get_username()} is deactivated; reactivate the login first.")
    return _invite_make(
        purpose=Invite.Purpose.PASSWORD_RESET,
        role=_role_of(login),
        login=login,
        created_by=created_by,
        expires_at=timezone.now() + timedelta(days=days),
    )


def invite_revoke(*, invite: Invite) -> Invite:
    if invite.used_at is None and invite.revoked_at is None:
        invite.revoked_at = timezone.now()
        invite.save(update_fields=["revoked_at"])
    return invite


def _invite_usable(invite: Invite | None) -> Invite:
    if invite is None:
        raise InviteUnusable("This link is not valid. Check that it was copied whole, or ask an operator for another.")
    if invite.used_at is not None:
        raise InviteUnusable("This link was already used; it works once. Log in, or ask an operator for a new link.")
    if invite.revoked_at is not None:
        raise InviteUnusable("This link was withdrawn by an operator; ask them for a new one.")
    if invite.expires_at <= timezone.now():
        raise InviteUnusable("This link has expired; ask an operator for a new one.")
    if invite.login_id is not None and not invite.login.is_active:
        raise InviteUnusable("This login is deactivated; ask an operator.")
    return invite


def invite_open(*, token: str) -> Invite:
    """The invite behind a link, if it can still be used (else InviteUnusable saying why)."""
    return _invite_usable(Invite.objects.select_related("login").filter(token_hash=_token_hash(token)).first())


@transaction.atomic
def invite_accept(*, token: str, password: str, username: str = ""):
    """The person behind a link sets their password (and username, unless preset): the login, made or reset.
    The invite's row is locked, so a link opened twice at once is used once."""
    invite = _invite_usable(
        Invite.objects.select_for_update(of=("self",))
        .select_related("login")
        .filter(token_hash=_token_hash(token))
        .first()
    )
    if invite.purpose == Invite.Purpose.PASSWORD_RESET:
        login = invite.login
        validate_password_for(login=login, password=password)
        login.set_password(password)
        login.save(update_fields=["password"])
        sessions_end(login=login)
    else:
        name = _username_clean(invite.username or username)
        validate_password_for(login=get_user_model()(username=name), password=password)
        login = _login_create(
            username=name, password=password, role=invite.role, added_by=invite.created_by, how=LoginOrigin.How.INVITE
        )
        invite.login = login
    invite.used_at = timezone.now()
    invite.save(update_fields=["used_at", "login"])
    return login


def validate_password_for(*, login, password: str) -> None:
    if not password:
        raise ValidationError({"password": ["Choose a password."]})
    try:
        validate_password(password, user=login)
    except ValidationError as exc:
        raise ValidationError({"password": exc.messages}) from None


# Changing logins -----------------------------------------------------------------------------------------------


def _last_operator_check(*, login, by, doing: str) -> None:
    """Refuse to leave the console without an active operator. Called under the people lock, so two operators
    demoting each other at once cannot both succeed."""
    if not (login.is_active and is_operator(login)):
        return
    if operators_active().exclude(pk=login.pk).exists():
        return
    who = "you are" if by is not None and by.pk == login.pk else f"{login.get_username()} is"
    raise OperatorError(
        f"Cannot {doing}: {who} the last active operator, and the console needs one. "
        "Make another login an operator first."
    )


def _locked(login):
    """The login's row, re-read under the people lock."""
    advisory_xact_lock(namespace=PEOPLE, name="roles")
    fresh = _users().select_for_update().get(pk=login.pk)
    fresh.__dict__.pop("_is_operator", None)
    return fresh


@transaction.atomic
def login_role_change(*, login, role: str, by=None):
    role = _role_clean(role)
    login = _locked(login)
    if role == _role_of(login):
        return login
    if role == Role.VIEWER:
        _last_operator_check(login=login, by=by, doing="make this login a viewer")
    _role_apply(login=login, role=role)
    return login


@transaction.atomic
def login_deactivate(*, login, by=None):
    """The login can no longer log in, and its sessions end now (its API tokens stop working with it)."""
    login = _locked(login)
    if not login.is_active:
        return login
    _last_operator_check(login=login, by=by, doing="deactivate this login")
    login.is_active = False
    login.save(update_fields=["is_active"])
    sessions_end(login=login)
    return login


@transaction.atomic
def login_reactivate(*, login):
    login = _locked(login)
    if not login.is_active:
        login.is_active = True
        login.save(update_fields=["is_active"])
    return login


@transaction.atomic
def login_password_reset(*, login) -> str:
    """A new password, returned once; the old one and every session of the login end now."""
    login = _locked(login)
    if not login.is_active:
        raise OperatorError(f"{login.get_username()} is deactivated; reactivate the login first.")
    password = _password_new()
    login.set_password(password)
    login.save(update_fields=["password"])
    sessions_end(login=login)
    return password


def sessions_end(*, login) -> int:
    """End every browser session of `login` (sessions live in the database: django.contrib.sessions); how many."""
    ended = 0
    for session in Session.objects.filter(expire_date__gt=timezone.now()).iterator():
        if str(session.get_decoded().get(SESSION_KEY)) == str(login.pk):
            session.delete()
            ended += 1
    return ended

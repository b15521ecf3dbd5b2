"""What an audit entry says changed: model signals tell the open scope (core.audit) every row saved or deleted, with
the before and after of the fields that changed, in the words the rest of the console uses for them.

Nothing a viewer may not read is written: a field whose name says it holds a secret (or a password's hint) shows
only that it changed; a field an app masks for viewers (a caption's passwords) is written masked; a row whose name
is one of those values is named by its kind and id. A login's groups are told as its role.
"""

import json
import re
from collections.abc import Callable

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models, transaction
from django.db.models.signals import m2m_changed, post_delete, post_save, pre_save

from core.models import AuditChange, Role
from core.roles import OPERATORS_GROUP

HIDDEN = "(hidden)"
# Rows of these apps are what the operators care about; Django's own bookkeeping (sessions, beat's
# schedule copy, axes' attempts, content types) is not.
AUDITED_APPS = frozenset({"core", "accounts", "ingestion", "packages", "reminders", "operations", "auth"})
# The trail itself and rows that only say which process holds what.
UNAUDITED_MODELS = frozenset(
    {"core.AuditEntry", "core.AuditChange", "core.SessionHolder", "core.IdempotentRequest", "auth.Permission"}
)
SECRET_FIELD = re.compile(r"password|secret|sealed|token|key|session|hash|hint", re.IGNORECASE)
# A new row's fields that say nothing a person chose (when it was made, a login's bookkeeping).
UNTOLD_WHEN_CREATED = frozenset({"id", "created_at", "updated_at", "date_joined", "last_login"})
VALUE_CHARS = 200

# (model label, field name) -> how a viewer may read its value; registered by the app that owns the field.
_masks: dict[tuple[str, str], Callable[[str], str]] = {}


def audit_value_mask(*, label: str, field: str, mask: Callable[[str], str]) -> None:
    """The trail writes this field as `mask` shows it (packages registers its captions: passwords masked)."""
    _masks[(label, field)] = mask


def audited(sender) -> bool:
    meta = sender._meta
    return meta.app_label in AUDITED_APPS and meta.label not in UNAUDITED_MODELS and not meta.proxy


def _shown(label: str, name: str, value):
    if SECRET_FIELD.search(name):
        return HIDDEN
    mask = _masks.get((label, name))
    if mask is not None and value:
        value = [mask(item) for item in value] if isinstance(value, list | tuple) else mask(str(value))
    if isinstance(value, bytes | memoryview):
        return f"({len(value)} bytes)"
    value = json.loads(json.dumps(value, cls=DjangoJSONEncoder, default=str))
    if isinstance(value, str) and len(value) > VALUE_CHARS:
        return value[:VALUE_CHARS] + "…"
    return value


def _values(instance: models.Model) -> dict:
    return {f.attname: getattr(instance, f.attname) for f in instance._meta.concrete_fields}


def row_named(instance: models.Model) -> str:
    """Its name, unless its name is a value the trail hides (a channel password is named by its hint)."""
    name = str(instance)
    label = instance._meta.label
    hidden = [value for field, value in _values(instance).items() if _shown(label, field, value) != value]
    if any(str(value) and str(value) in name for value in hidden):
        return f"{instance._meta.verbose_name} #{instance.pk}"
    return name[:300]


def _record(*, instance: models.Model, operation: str, fields: dict, using: str, relation: bool = False) -> None:
    from core.audit import audit_scope_current

    scope = audit_scope_current()
    change = AuditChange(
        kind=instance._meta.label,
        object_id=str(instance.pk),
        object_repr=row_named(instance),
        operation=operation,
        fields=fields,
    )
    # Rows added to or removed from a relation: merged with the same row's other changes by union, not replaced.
    change.relations = set(fields) if relation else set()
    # Only what was committed: a change rolled back with its transaction never happened.
    transaction.on_commit(lambda: scope.add(change), using=using)


def _scope_open() -> bool:
    from core.audit import audit_scope_current

    return audit_scope_current() is not None


def _before_save(sender, instance, raw=False, using=None, **kwargs) -> None:
    from core.audit import audit_scope_current

    scope = audit_scope_current()
    if scope is None or raw or not audited(sender) or instance._state.adding or instance.pk is None:
        return
    if len(scope.changes) >= settings.AUDIT_MAX_CHANGES:
        return  # it will only be counted: spare the read
    instance._audit_before = (
        sender._base_manager.using(using)
        .filter(pk=instance.pk)
        .values(*(f.attname for f in sender._meta.concrete_fields))
        .first()
    )


def _after_save(sender, instance, created, raw=False, using=None, update_fields=None, **kwargs) -> None:
    if not _scope_open() or raw or not audited(sender):
        return
    label = sender._meta.label
    after = _values(instance)
    if created:
        fields = {
            name: [None, _shown(label, name, value)]
            for name, value in after.items()
            if value not in (None, "", False, [], {}) and name not in UNTOLD_WHEN_CREATED
        }
        if label == settings.AUTH_USER_MODEL:
            fields["role"] = [None, _role_of(instance, using)]
        _record(instance=instance, operation=AuditChange.Operation.CREATED, fields=fields, using=using)
        return
    before = instance.__dict__.pop("_audit_before", None)
    if before is None:
        fields = {}
    else:
        names = [f.attname for f in sender._meta.concrete_fields if update_fields is None or f.name in update_fields]
        fields = {
            name: [_shown(label, name, before.get(name)), _shown(label, name, after[name])]
            for name in names
            if before.get(name) != after[name]
        }
        if not fields:
            return  # saved as it was
    _record(instance=instance, operation=AuditChange.Operation.CHANGED, fields=fields, using=using)


def _after_delete(sender, instance, using=None, **kwargs) -> None:
    if not _scope_open() or not audited(sender):
        return
    label = sender._meta.label
    fields = {
        name: [_shown(label, name, value), None] for name, value in _values(instance).items() if value not in (None, "")
    }
    _record(instance=instance, operation=AuditChange.Operation.DELETED, fields=fields, using=using)


def _role_of(login, using) -> str:
    """From the database, not the cache core.roles keeps on the login object."""
    operator = login.is_superuser or login.groups.db_manager(using).filter(name=OPERATORS_GROUP).exists()
    return Role.OPERATOR if operator else Role.VIEWER


def _relations_changed(sender, instance, action, model, pk_set=None, using=None, **kwargs) -> None:
    """Many-to-many rows send no save signal. A login's groups are its role: told as `role: viewer → operator`,
    and only when the role did change (removing a group it was not in changes nothing). Other relations are told
    as the rows added or removed."""
    if not _scope_open() or not audited(type(instance)):
        return
    if (
        isinstance(instance, models.Model)
        and instance._meta.label == settings.AUTH_USER_MODEL
        and sender is type(instance).groups.through
    ):
        if action in ("pre_add", "pre_remove", "pre_clear"):
            instance._audit_role_before = _role_of(instance, using)
        elif action in ("post_add", "post_remove", "post_clear"):
            before = instance.__dict__.pop("_audit_role_before", None)
            after = _role_of(instance, using)
            if before is not None and before != after:
                fields = {"role": [before, after]}
                _record(instance=instance, operation=AuditChange.Operation.CHANGED, fields=fields, using=using)
        return
    if action not in ("post_add", "post_remove") or not pk_set:
        return
    names = sorted(str(row) for row in model._base_manager.using(using).filter(pk__in=pk_set))
    related = str(model._meta.verbose_name_plural)
    fields = {related: [[], names] if action == "post_add" else [names, []]}
    _record(instance=instance, operation=AuditChange.Operation.CHANGED, fields=fields, using=using, relation=True)


def audit_signals_connect() -> None:
    m2m_changed.connect(_relations_changed, dispatch_uid="audit_relations_changed")
    pre_save.connect(_before_save, dispatch_uid="audit_before_save")
    post_save.connect(_after_save, dispatch_uid="audit_after_save")
    post_delete.connect(_after_delete, dispatch_uid="audit_after_delete")

"""Core's pages, one module per job: the audit trail, API tokens, notifications, people and invite links, logging
out, and the error pages (config/urls.py names these as its handlers). The URLs wire these."""

from core.views.audit import audit_list
from core.views.errors import bad_request, not_found, permission_denied, server_error
from core.views.logout import LogoutView
from core.views.notifications import (
    notification_bell,
    notification_list,
    notification_panel,
    notification_read,
    notifications_read_all,
)
from core.views.people import (
    invite_accept,
    invite_revoke,
    people_list,
    person_add,
    person_deactivate,
    person_password,
    person_reactivate,
    person_role,
)
from core.views.tokens import token_create, token_list, token_revoke

__all__ = [
    "LogoutView",
    "audit_list",
    "bad_request",
    "invite_accept",
    "invite_revoke",
    "not_found",
    "notification_bell",
    "notification_list",
    "notification_panel",
    "notification_read",
    "notifications_read_all",
    "people_list",
    "permission_denied",
    "person_add",
    "person_deactivate",
    "person_password",
    "person_reactivate",
    "person_role",
    "server_error",
    "token_create",
    "token_list",
    "token_revoke",
]

"""The core API, one module per job: the error model (`errors`), Idempotency-Key (`idempotent`), the fields of a
run's outcome (`outcomes`), notifications, the audit trail, API tokens and people. The apps' APIs and the URLs
import these names from here."""

from core.api.audit import AuditEntryViewSet
from core.api.errors import BAD_REQUEST, ErrorSerializer, api_error_status_register, error_response, exception_handler
from core.api.idempotent import idempotent
from core.api.notifications import NotificationViewSet
from core.api.outcomes import OutcomeFields
from core.api.people import InviteViewSet, PersonViewSet
from core.api.tokens import ApiTokenViewSet

__all__ = [
    "BAD_REQUEST",
    "ApiTokenViewSet",
    "AuditEntryViewSet",
    "ErrorSerializer",
    "InviteViewSet",
    "NotificationViewSet",
    "OutcomeFields",
    "PersonViewSet",
    "api_error_status_register",
    "error_response",
    "exception_handler",
    "idempotent",
]

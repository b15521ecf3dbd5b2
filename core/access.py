"""The checks every API view makes before its own: a login, the person's role and the token's scope.

Every API view extends `ScopeAndRole` (tests/architecture/test_scope_and_role.py walks the URLs to see that
none is left out and none overrides how the checks are gathered). A view's `permission_classes`, and an
action's, are added after these: a view may ask for more (people: operators only, even to look), never for
less. Both run in DRF's `initial()`, before the request body is read or any row looked up, so a refused
change is refused whatever it sends.
"""

from rest_framework.permissions import IsAuthenticated

from core.roles import IsOperatorOrReadOnly
from core.tokens import TokenScopeAllows

# Who may send a change (POST, PUT, PATCH, DELETE) with a suitable token or a session.
OPERATORS = "operators"
LOGGED_IN = "logged in"  # each person's own API tokens: a viewer makes and revokes read ones
ANYONE = "anyone"  # the token login: the password it is sent is its credential


class ScopeAndRole:
    """First base of every API view: the checks below come first, then the view's own."""

    permission_classes = ()  # what a view names here comes on top of the checks below
    changes_by = OPERATORS
    # False only where the view checks a credential of its own (the metrics' bearer token, a password).
    login_required = True

    def get_permissions(self):
        required = []
        if self.login_required:
            required.append(IsAuthenticated())
        if self.changes_by == OPERATORS:
            # Before the scope: a viewer's token is refused with what a viewer can act on.
            required.append(IsOperatorOrReadOnly())
        required.append(TokenScopeAllows())
        return [*required, *super().get_permissions()]

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from core.errors import OperatorError
from core.forms import error_text
from core.models import ApiToken
from core.tokens import api_token_create


class Command(BaseCommand):
    help = "Make a named API token for a login (as the Tokens page does). Prints its secret, this once."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", required=True, help="What will use it: backup script")
        parser.add_argument("--scope", choices=ApiToken.Scope.values, default=ApiToken.Scope.READ)
        parser.add_argument("--days", type=int, default=None, help="How long it lasts (API_TOKEN_DEFAULT_DAYS)")

    def handle(self, *args, username, name, scope, days, **options):
        owner = get_user_model().objects.filter(username=username, is_active=True).first()
        if owner is None:
            raise CommandError(f"No active login named {username!r}; create_login makes one.")
        try:
            token, secret = api_token_create(owner=owner, name=name, scope=scope, days=days)
        except (ValidationError, OperatorError) as exc:
            raise CommandError(error_text(exc)) from None
        self.stdout.write(
            f"{token} ({token.get_scope_display().lower()}, expires {token.expires_at:%Y-%m-%d}): {secret}\n"
            f"Send it as `Authorization: Token {secret}`; it cannot be shown again "
            f"(default {settings.API_TOKEN_DEFAULT_DAYS} days, at most {settings.API_TOKEN_MAX_DAYS})."
        )

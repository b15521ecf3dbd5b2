import json
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from accounts.models import AuthState
from accounts.services import LoginStepError
from operations.sandbox import sandbox_authorize
from telegram.errors import TelegramError
from telegram.sandbox.loader import world_load
from telegram.sandbox.world import WorldError


# In operations/, not telegram/: with --authorize it logs accounts in and applies chat roles (other apps).
class Command(BaseCommand):
    help = "Replace the sandbox world with a world file (DESIGN.md, 'Sandbox world file (JSON, v1)')."

    def add_arguments(self, parser):
        parser.add_argument("world", help="the world file (JSON)")
        parser.add_argument(
            "--authorize", action="store_true", help="also log every world account in, as an operator would"
        )

    def handle(self, *args, world: str, authorize: bool, **options):
        path = Path(world)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise CommandError(f"{path}: no such world file.") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"{path}: cannot read it ({exc}).") from None
        except json.JSONDecodeError as exc:
            raise CommandError(f"{path}: not valid JSON ({exc}).") from None
        try:
            world_load(settings.SANDBOX_PATH, data)
        except WorldError as exc:
            raise CommandError(f"{path}: {exc}") from None
        self.stdout.write(f"Loaded the sandbox world {path} into {settings.SANDBOX_PATH}.")
        if not authorize:
            return
        try:
            # An account marked "logged_out" in the world file is left for a person to log in (the demo's one).
            logged_out = frozenset(spec["phone"] for spec in data.get("accounts") or [] if spec.get("logged_out"))
            accounts = sandbox_authorize(logged_out=logged_out)
        except (TelegramError, LoginStepError, ValidationError) as exc:
            raise CommandError(f"{path}: logging the world's accounts in failed: {exc}") from None
        for account in accounts:
            if account.auth_state != AuthState.AUTHENTICATED:
                self.stdout.write(f"  {account.phone} added, not logged in: log it in from the Accounts page")
                continue
            self.stdout.write(f"  {account.phone} ({account}) logged in, {account.chat_links.count()} chats")

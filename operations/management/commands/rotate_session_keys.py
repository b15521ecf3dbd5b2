from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from accounts.services import account_sessions_reseal
from core.crypto import SealBroken
from packages.bot.services import bot_secrets_reseal
from packages.services import archive_passwords_reseal


class Command(BaseCommand):
    help = (
        "Re-encrypt every stored Telegram session and archive password with the newest key of "
        "STASHCAST_SESSION_KEYS (step 3 of a key rotation; see docs/security.md)."
    )

    def handle(self, *args, **options):
        try:
            with transaction.atomic():  # sessions and passwords alike, or nothing
                report = account_sessions_reseal()
                passwords = archive_passwords_reseal()
                bot = bot_secrets_reseal()
        except (SealBroken, ImproperlyConfigured) as exc:
            raise CommandError(str(exc)) from None
        keys = len(settings.SESSION_ENCRYPTION_KEYS)
        self.stdout.write(
            f"Re-encrypted {report.resealed} session(s) with the newest key "
            f"({report.were_older} had been sealed with an older one); "
            f"{report.without_session} account(s) have no session. Re-encrypted {passwords} archive password(s)."
            f" Re-encrypted {bot} of the bot's secrets (its token and session)."
        )
        if keys > 1:
            self.stdout.write(
                f"Every session and password now opens with the newest key: the {keys - 1} older key(s) can be "
                "removed from STASHCAST_SESSION_KEYS (restart web, the workers and the bot after changing it)."
            )

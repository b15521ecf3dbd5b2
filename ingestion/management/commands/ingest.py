import argparse

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from accounts.models import AuthState, TelegramAccount
from core.engine import BUSY
from ingestion.models import IngestionTrigger
from ingestion.pipeline import ingestion_run_execute
from ingestion.services import ingestion_run_enqueue, ingestion_run_request


class Command(BaseCommand):
    help = "Run one ingestion cycle now, in this process, with a progress bar, and exit."

    def add_arguments(self, parser):
        # One cycle is all this command runs (beat starts the others); `--once` is still accepted, and hidden,
        # so that scripts that pass it keep working.
        parser.add_argument("--once", action="store_true", help=argparse.SUPPRESS)
        parser.add_argument("--account", help="Only this account (phone number).")

    def handle(self, *args, account, **options):
        accounts = TelegramAccount.objects.filter(is_active=True, auth_state=AuthState.AUTHENTICATED)
        if account:
            accounts = accounts.filter(phone=account)
            if not accounts.exists():
                raise CommandError(f"No active, logged-in account with phone {account}.")
        for telegram_account in accounts:
            run, created = ingestion_run_request(
                account=telegram_account, trigger=IngestionTrigger.COMMAND, enqueue=False
            )
            with tqdm(desc=str(telegram_account), unit="B", unit_scale=True, leave=True) as bar:

                def show(progress_run, bar=bar):
                    bar.total = progress_run.current_bytes_total or None
                    bar.n = progress_run.current_bytes_done
                    bar.set_postfix_str(f"{progress_run.current_channel} {progress_run.current_file}"[:60])
                    bar.refresh()

                status = ingestion_run_execute(run_id=run.pk, on_progress=show)
            if status == BUSY and created:
                # Another process holds the account: the workers take the run once it lets go.
                ingestion_run_enqueue(run.pk)
                self.stdout.write(f"{telegram_account}: the account is busy elsewhere; run #{run.pk} is queued.")
                continue
            if status in (BUSY, None):
                self.stdout.write(f"{telegram_account}: run #{run.pk} is already being worked on elsewhere.")
                continue
            run.refresh_from_db()
            self.stdout.write(
                f"{telegram_account}: {status} — {run.ingested} ingested, {run.duplicates} duplicates, "
                f"{run.skipped} skipped, {run.messages_scanned} messages scanned"
                + (f" ({run.error})" if run.error else "")
            )

import asyncio
import logging
import signal
import time

from django.core.management.base import BaseCommand, CommandError

from core.db_thread import in_db_thread
from packages.bot import services
from packages.bot.runner import bot_run
from telegram.errors import AuthRequired, SessionInUse, TelegramError

log = logging.getLogger(__name__)
OFF_CHECK_SECONDS = 10  # how often a bot that is off (or has no token) looks whether an operator turned it on
RETRY_SECONDS = 30  # after Telegram refused the token, or another process runs this bot


def _stop_quietly(*_signal) -> None:
    raise SystemExit(0)


class Command(BaseCommand):
    help = "Run the members' bot (one process per bot token): it waits while the bot is off on the Bot page."

    def add_arguments(self, parser):
        parser.add_argument("--once", action="store_true", help="stop when the bot is turned off instead of waiting")
        parser.add_argument(
            "--check",
            action="store_true",
            help="exit 0 when the bot has a token (the Bot page's or TELEGRAM_BOT_TOKEN)",
        )

    def handle(self, *args, once: bool, check: bool, **options):
        if check:
            if not services.bot_token():
                raise CommandError("The bot has no token: set one on the Bot page or in TELEGRAM_BOT_TOKEN.")
            return
        try:
            self._serve(once=once)
        except KeyboardInterrupt:  # Ctrl-C while it waits: a quiet stop
            return

    def _serve(self, *, once: bool) -> None:
        said_off = False
        self._stopping = False
        while not self._stopping:
            # SIGTERM while it waits (supervisord, docker stop): a quiet stop (a running bot handles its own, below)
            signal.signal(signal.SIGTERM, _stop_quietly)
            bot = services.bot_settings_get()
            token = services.bot_token()
            if not (bot.enabled and token):
                if once:
                    return
                if not said_off:
                    log.info("The bot is off (or has no token): turn it on on the Bot page.")
                    said_off = True
                time.sleep(OFF_CHECK_SECONDS)
                continue
            said_off = False
            try:
                asyncio.run(self._run(token))
            except (AuthRequired, SessionInUse) as exc:
                log.warning("The bot did not start: %s", exc)
                time.sleep(RETRY_SECONDS)
            except TelegramError as exc:
                log.warning("The bot stopped: %s", exc)
                time.sleep(RETRY_SECONDS)
            if once:
                return

    async def _run(self, token: str) -> None:
        stop = asyncio.Event()

        def stop_asked() -> None:  # SIGTERM (supervisord, docker stop) or Ctrl-C: finish what is in hand, then go
            self._stopping = True
            stop.set()

        for signal_number in (signal.SIGINT, signal.SIGTERM):
            asyncio.get_running_loop().add_signal_handler(signal_number, stop_asked)
        await bot_run(token=token, stop=stop)
        if not self._stopping:
            await in_db_thread(services.bot_activity_add)(person=None, kind="stopped", text="The bot was turned off.")

"""An account's Telegram session, opened for every engine in one place, and what Telegram's refusal of the
account means for it, decided in one place.

Ingestion cycles, reminder fan-outs, package sends and one-off calls open an account's gateway here: its sealed
session, under its session lease (`telegram.gateway.open_gateway`: one process at a time talks as an account;
a holder lends it at its safe points, `hand_over_if_wanted`). When Telegram refuses the account itself,
`account_refusal_record` decides what that means for every path alike: PEER_FLOOD rests it (Telegram thinks
it spams; it is not banned), any other restriction or a login gone marks it unusable.
"""

from accounts.models import AuthState, TelegramAccount
from accounts.pace import account_rest
from core.crypto import unseal
from telegram.errors import AccountRestricted, AuthRequired, TelegramError
from telegram.gateway import TelegramGateway, open_gateway

PEER_FLOOD = "PEER_FLOOD"


def account_gateway(
    *, account: TelegramAccount, wait_seconds: float | None = None, transfer_budget=None
) -> TelegramGateway:
    """The account's gateway, not opened yet (`async with` it): its session, under its session lease, waiting
    up to wait_seconds (default TELEGRAM_SESSION_WAIT_SECONDS) for another process to let go."""
    return open_gateway(
        phone=account.phone,
        session=unseal(account.session_sealed),
        wait_seconds=wait_seconds,
        transfer_budget=transfer_budget,
    )


def account_mark_unusable(*, account: TelegramAccount, error: TelegramError) -> None:
    account.auth_state = AuthState.EXPIRED if isinstance(error, AuthRequired) else AuthState.RESTRICTED
    account.last_error = str(error)
    account.save(update_fields=["auth_state", "last_error"])


def account_refusal_record(*, account: TelegramAccount, error: AuthRequired | AccountRestricted, doing: str) -> bool:
    """Telegram refused the account itself while it was `doing` something ("during send #4"). PEER_FLOOD rests
    it (every send and run of it stops until the rest ends); another restriction, or its session gone, marks
    it unusable (its page says what to do). Returns whether it rests."""
    if isinstance(error, AccountRestricted) and error.rpc == PEER_FLOOD:
        account_rest(account=account, reason=f"Telegram answered {PEER_FLOOD} {doing}")
        return True
    account_mark_unusable(account=account, error=error)
    return False

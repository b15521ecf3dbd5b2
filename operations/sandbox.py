"""Log every world account in through the real login services, as an operator would in the UI.

Here, above the apps it drives (accounts' login, ingestion's chat roles), so that `telegram` imports no app."""

from django.conf import settings

from accounts.models import AuthState, TelegramAccount
from accounts.services import (
    account_create,
    account_mark_unusable,
    account_refresh_chats,
    account_send_code,
    account_sign_in,
)
from ingestion.services import channels_apply_roles
from telegram.errors import AuthRequired
from telegram.sandbox.world import World


def sandbox_authorize(*, logged_out: frozenset[str] = frozenset()) -> list[TelegramAccount]:
    """Each world account as an authenticated TelegramAccount with its chats stored,
    and the chats' roles applied: sources read by their members, the destination
    written by its admins. The accounts in `logged_out` are only added, for the operator to log in."""
    world = World(settings.SANDBOX_PATH)
    try:
        specs = world.accounts()
        roles = {chat["id"]: chat["role"] for chat in world.chats() if chat.get("role")}
    finally:
        world.close()
    accounts = []
    for spec in specs:
        account = TelegramAccount.objects.filter(phone=spec["phone"]).first() or account_create(phone=spec["phone"])
        if account.auth_state == AuthState.AUTHENTICATED:
            # its session belonged to the world just replaced
            account_mark_unusable(account=account, error=AuthRequired("The sandbox world was reloaded."))
        if spec["phone"] in logged_out:
            accounts.append(account)
            continue
        account = account_send_code(account=account)
        account = account_sign_in(account=account, code=spec["code"])
        if account.auth_state == AuthState.AWAITING_PASSWORD:
            account = account_sign_in(account=account, password=spec["password"])
        account_refresh_chats(account=account)
        accounts.append(account)
    channels_apply_roles(roles=roles)
    return accounts

"""Logging in to the sandbox server through the real Telethon client: codes, DC migration, two-step
passwords (SRP), refused codes, banned accounts, sessions, Premium."""

import asyncio

import pytest
from telethon import errors, functions, types
from telethon.crypto import AuthKey
from telethon.sessions import StringSession

from telegram.errors import (
    AccountRestricted,
    AuthRequired,
    CodeExpired,
    CodeInvalid,
    LoginRefused,
    PasswordInvalid,
    PasswordRequired,
    PhoneInvalid,
)
from telegram.gateway import open_gateway
from telegram.sandbox.world import DC_ADDRESSES

pytestmark = pytest.mark.django_db  # opening a gateway takes its account's session lease, kept in the database

READER, GUARDED, MOVED = "+15550000001", "+15550000002", "+15550000003"
WORLD = {
    "limits": {"upload_max_bytes": 1000, "premium_upload_max_bytes": 2000},
    "accounts": [
        {"phone": READER, "first_name": "Reader", "code": "12345"},
        {
            "phone": GUARDED,
            "first_name": "Guarded",
            "last_name": "Writer",
            "code": "54321",
            "password": "hunter2",
            "premium": True,
        },
        {"phone": MOVED, "first_name": "Moved", "code": "24680", "dc": 4},
    ],
}


def step(phone: str, session: str, action):
    """One login step in its own gateway and event loop, as the login services do; returns (result, session)."""

    async def main():
        async with open_gateway(phone=phone, session=session) as gateway:
            return await action(gateway), gateway.export_session()

    return asyncio.run(main())


def session_key(world, session: str) -> dict:
    """The server's row for the authorization key a session string carries."""
    return world.key(str(StringSession(session).auth_key.key_id))


def test_code_login_issues_a_session_that_later_gateways_accept(sandbox):
    world = sandbox(WORLD)
    phone_code_hash, session = step(READER, "", lambda gateway: gateway.send_code())
    assert StringSession(session).dc_id == 2  # Telethon's first data centre, where this account lives

    with pytest.raises(CodeInvalid):
        step(READER, session, lambda gateway: gateway.sign_in_code(code="11111", phone_code_hash=phone_code_hash))
    info, session = step(
        READER, session, lambda gateway: gateway.sign_in_code(code="12345", phone_code_hash=phone_code_hash)
    )

    assert (info.user_id, info.phone, info.display_name, info.premium) == (15550000001, READER, "Reader", False)
    assert info.upload_max_bytes == 1000  # published as a fraction of a part, read back in bytes
    assert (session_key(world, session)["phone"], session_key(world, session)["state"]) == (READER, "authorized")
    me, _ = step(READER, session, lambda gateway: gateway.get_me())
    assert me == info


def test_every_login_request_carries_the_phone_number_in_digits_only(sandbox):
    world = sandbox(WORLD)
    phone_code_hash, session = step(READER, "", lambda gateway: gateway.send_code())
    assert session_key(world, session)["code_phone"] == "15550000001"  # as Telethon's parse_phone and TDLib send it

    info, session = step(
        READER, session, lambda gateway: gateway.sign_in_code(code="12345", phone_code_hash=phone_code_hash)
    )
    assert (info.phone, session_key(world, session)["state"]) == (READER, "authorized")


def test_a_sign_in_whose_phone_is_spelled_otherwise_than_its_send_code_has_expired(sandbox):
    sandbox(WORLD)

    async def send_then_sign_in(gateway, *, sent_as: str, signed_in_as: str):
        client = gateway._client  # raw requests: the server's rule, whatever the adapter would send
        sent = await client(functions.auth.SendCodeRequest(sent_as, 1, "hash", types.CodeSettings()))
        return await client(functions.auth.SignInRequest(signed_in_as, sent.phone_code_hash, phone_code="12345"))

    with pytest.raises(errors.PhoneCodeExpiredError):
        step(READER, "", lambda gateway: send_then_sign_in(gateway, sent_as=READER, signed_in_as="15550000001"))
    with pytest.raises(errors.PhoneCodeExpiredError):
        step(READER, "", lambda gateway: send_then_sign_in(gateway, sent_as="15550000001", signed_in_as=READER))
    authorization, _ = step(READER, "", lambda gateway: send_then_sign_in(gateway, sent_as=READER, signed_in_as=READER))
    assert authorization.user.phone == "15550000001"


def test_two_step_verification_checks_the_password_by_srp(sandbox):
    world = sandbox(WORLD)
    phone_code_hash, session = step(GUARDED, "", lambda gateway: gateway.send_code())

    with pytest.raises(PasswordRequired):
        step(GUARDED, session, lambda gateway: gateway.sign_in_code(code="54321", phone_code_hash=phone_code_hash))
    with pytest.raises(AuthRequired):
        step(GUARDED, session, lambda gateway: gateway.get_me())
    with pytest.raises(PasswordInvalid):
        step(GUARDED, session, lambda gateway: gateway.sign_in_password(password="hunter3"))
    info, session = step(GUARDED, session, lambda gateway: gateway.sign_in_password(password="hunter2"))

    assert (info.display_name, info.premium, info.upload_max_bytes) == ("Guarded Writer", True, 2000)
    assert step(GUARDED, session, lambda gateway: gateway.get_me())[0] == info
    # The password never travels: the server only saw SRP's proof.
    assert session_key(world, session)["srp_b"] is None
    assert world.stats()["calls"][GUARDED]["auth.checkPassword"] == 2


def test_phone_migrate_moves_the_login_to_the_accounts_data_centre(sandbox):
    world = sandbox(WORLD)

    phone_code_hash, session = step(MOVED, "", lambda gateway: gateway.send_code())
    info, session = step(
        MOVED, session, lambda gateway: gateway.sign_in_code(code="24680", phone_code_hash=phone_code_hash)
    )

    stored = StringSession(session)
    assert (stored.dc_id, stored.server_address) == (4, DC_ADDRESSES[4])
    assert session_key(world, session)["dc_id"] == 4
    assert info.display_name == "Moved"
    assert step(MOVED, session, lambda gateway: gateway.get_me())[0] == info
    assert world.stats()["calls"][MOVED]["auth.sendCode"] == 2  # PHONE_MIGRATE_4 on DC 2, then the code on DC 4


@pytest.mark.parametrize(
    ("login", "rpc", "advice"),
    [
        ("payment_required", "SENT_CODE_PAYMENT_REQUIRED", "Log in once in an official Telegram app"),
        ("email_setup_required", "SENT_CODE_EMAIL_SETUP_REQUIRED", "set up the login email"),
    ],
)
def test_a_refused_code_says_what_the_operator_must_do(sandbox, login, rpc, advice):
    sandbox({"accounts": [{"phone": READER, "login": login}]})

    with pytest.raises(LoginRefused, match=advice) as refused:
        step(READER, "", lambda gateway: gateway.send_code())

    assert refused.value.rpc == rpc


def test_a_banned_account_is_restricted(sandbox, sandbox_run):
    world = sandbox({"accounts": [{"phone": READER, "banned": True}]})
    session = world.session_issue(READER)

    with pytest.raises(AccountRestricted) as restricted:
        sandbox_run(world, READER, lambda gateway: gateway.get_me(), session=session)
    assert restricted.value.rpc == "USER_DEACTIVATED_BAN"
    with pytest.raises(AccountRestricted):  # and it cannot log in again
        step(READER, "", lambda gateway: gateway.send_code())


def test_a_code_from_another_request_has_expired(sandbox):
    sandbox(WORLD)
    old_hash, _ = step(READER, "", lambda gateway: gateway.send_code())
    _, session = step(READER, "", lambda gateway: gateway.send_code())

    with pytest.raises(CodeExpired):
        step(READER, session, lambda gateway: gateway.sign_in_code(code="12345", phone_code_hash=old_hash))
    # No password step is pending on this session: the server knows no login to finish.
    with pytest.raises(AuthRequired):
        step(READER, session, lambda gateway: gateway.sign_in_password(password="x"))


def test_a_phone_outside_the_world_is_invalid(sandbox):
    sandbox(WORLD)

    with pytest.raises(PhoneInvalid):
        step("+15559999999", "", lambda gateway: gateway.send_code())


def unknown_key_session() -> str:
    session = StringSession()
    session.set_dc(2, DC_ADDRESSES[2], 443)
    session.auth_key = AuthKey(bytes(256))
    return session.save()


@pytest.mark.parametrize("session", ["", "garbage", unknown_key_session()])
def test_calls_without_a_valid_session_need_a_login(sandbox, session):
    sandbox(WORLD)

    with pytest.raises(AuthRequired):
        step(READER, session, lambda gateway: gateway.list_chats())


def test_a_session_is_its_accounts_and_can_be_revoked(sandbox, sandbox_run):
    world = sandbox(WORLD)
    session = world.session_issue(READER)

    # The key is what Telegram knows: another account's session is refused, not used as that other account.
    with pytest.raises(AuthRequired, match="belongs to another Telegram account"):
        sandbox_run(world, GUARDED, lambda gateway: gateway.get_me(), session=session)
    assert sandbox_run(world, READER, lambda gateway: gateway.get_me(), session=session).user_id == 15550000001
    world.sessions_revoke(READER)
    with pytest.raises(AuthRequired) as revoked:
        sandbox_run(world, READER, lambda gateway: gateway.get_me(), session=session)
    assert revoked.value.rpc == "SESSION_REVOKED"


def test_premium_comes_from_the_world_and_can_change(sandbox, sandbox_run):
    world = sandbox(WORLD)

    world.account_update(READER, premium=True)

    me = sandbox_run(world, READER, lambda gateway: gateway.get_me())
    assert (me.premium, me.upload_max_bytes) == (True, 2000)


def test_default_limits_are_telegrams(sandbox, sandbox_run):
    world = sandbox({"accounts": WORLD["accounts"]})

    assert sandbox_run(world, READER, lambda gateway: gateway.get_me()).upload_max_bytes == 2097152000
    assert sandbox_run(world, GUARDED, lambda gateway: gateway.get_me()).upload_max_bytes == 4194304000

"""Sandbox login: codes, two-step passwords, sessions, Premium."""

import asyncio

import pytest

from telegram.errors import AuthRequired, CodeExpired, CodeInvalid, PasswordInvalid, PasswordRequired, PhoneInvalid
from telegram.sandbox.gateway import SandboxGateway

READER, GUARDED = "+15550000001", "+15550000002"
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
    ],
}


def step(world, phone: str, session: str, action):
    """One login step in its own gateway and event loop, as the login services do; returns (result, session)."""

    async def main():
        async with SandboxGateway(phone=phone, session=session, path=world.path) as gateway:
            return await action(gateway), gateway.export_session()

    return asyncio.run(main())


def test_code_login_issues_a_session_that_later_gateways_accept(sandbox):
    world = sandbox(WORLD)
    phone_code_hash, session = step(world, READER, "", lambda gateway: gateway.send_code())
    assert session.startswith(f"sandbox:{READER}:")

    with pytest.raises(CodeInvalid):
        step(
            world, READER, session, lambda gateway: gateway.sign_in_code(code="11111", phone_code_hash=phone_code_hash)
        )
    info, session = step(
        world, READER, session, lambda gateway: gateway.sign_in_code(code="12345", phone_code_hash=phone_code_hash)
    )

    assert (info.user_id, info.phone, info.display_name, info.premium) == (15550000001, READER, "Reader", False)
    assert info.upload_max_bytes == 1000
    me, _ = step(world, READER, session, lambda gateway: gateway.get_me())
    assert me == info


def test_two_step_verification_asks_for_the_password(sandbox):
    world = sandbox(WORLD)
    phone_code_hash, session = step(world, GUARDED, "", lambda gateway: gateway.send_code())

    with pytest.raises(PasswordRequired):
        step(
            world, GUARDED, session, lambda gateway: gateway.sign_in_code(code="54321", phone_code_hash=phone_code_hash)
        )
    with pytest.raises(AuthRequired):
        step(world, GUARDED, session, lambda gateway: gateway.get_me())
    with pytest.raises(PasswordInvalid):
        step(world, GUARDED, session, lambda gateway: gateway.sign_in_password(password="hunter3"))
    info, session = step(world, GUARDED, session, lambda gateway: gateway.sign_in_password(password="hunter2"))

    assert (info.display_name, info.premium, info.upload_max_bytes) == ("Guarded Writer", True, 2000)
    assert step(world, GUARDED, session, lambda gateway: gateway.get_me())[0] == info


def test_a_code_from_another_request_has_expired(sandbox):
    world = sandbox(WORLD)
    old_hash, _ = step(world, READER, "", lambda gateway: gateway.send_code())
    _, session = step(world, READER, "", lambda gateway: gateway.send_code())

    with pytest.raises(CodeExpired):
        step(world, READER, session, lambda gateway: gateway.sign_in_code(code="12345", phone_code_hash=old_hash))
    with pytest.raises(CodeExpired):
        step(world, READER, session, lambda gateway: gateway.sign_in_password(password="x"))


def test_a_phone_outside_the_world_is_invalid(sandbox):
    world = sandbox(WORLD)

    with pytest.raises(PhoneInvalid):
        step(world, "+15559999999", "", lambda gateway: gateway.send_code())


@pytest.mark.parametrize("session", ["", "sandbox:+15550000001:nope", "garbage"])
def test_calls_without_a_valid_session_need_a_login(sandbox, session):
    world = sandbox(WORLD)

    with pytest.raises(AuthRequired):
        step(world, READER, session, lambda gateway: gateway.list_chats())


def test_a_session_is_for_its_own_phone_and_can_be_revoked(sandbox):
    world = sandbox(WORLD)
    session = world.session_issue(READER)

    with pytest.raises(AuthRequired):
        step(world, GUARDED, session, lambda gateway: gateway.get_me())
    world.sessions_revoke(READER)
    with pytest.raises(AuthRequired):
        step(world, READER, session, lambda gateway: gateway.get_me())


def test_premium_comes_from_the_world_and_can_change(sandbox, sandbox_run):
    world = sandbox(WORLD)

    world.account_update(READER, premium=True)

    me = sandbox_run(world, READER, lambda gateway: gateway.get_me())
    assert (me.premium, me.upload_max_bytes) == (True, 2000)


def test_default_limits_are_telegrams(sandbox, sandbox_run):
    world = sandbox({"accounts": WORLD["accounts"]})

    assert sandbox_run(world, READER, lambda gateway: gateway.get_me()).upload_max_bytes == 2097152000
    assert sandbox_run(world, GUARDED, lambda gateway: gateway.get_me()).upload_max_bytes == 4194304000

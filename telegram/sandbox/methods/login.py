"""Connecting and logging in: config, who am I, send code, sign in, two-step verification, exported keys."""

import secrets

from telethon.tl import functions, types

from telegram.records import PART_SIZE
from telegram.sandbox import srp, tl, world
from telegram.sandbox.faults import RpcAnswer
from telegram.sandbox.methods.common import Call


def get_config(call: Call):
    return tl.config(call.dc_id)


def get_app_config(call: Call):
    # Limits are published in parts, as Telegram does; a world's byte limit may be a fraction of a part.
    def parts(key: str) -> float:
        limit = call.world.meta(key)
        return limit // PART_SIZE if limit % PART_SIZE == 0 else limit / PART_SIZE

    return tl.app_config(upload_parts=parts("upload_max_bytes"), premium_upload_parts=parts("premium_upload_max_bytes"))


def get_users(call: Call):
    me = call.me()
    return [
        tl.user(me, is_self=True) if isinstance(user, types.InputUserSelf) else types.UserEmpty(id=0)
        for user in call.request.id
    ]


def get_state(call: Call):
    call.me()
    return tl.state()


def get_difference(call: Call):
    call.me()
    return types.updates.DifferenceEmpty(date=tl.date(world.clock()), seq=0)


def _login_account(call: Call, phone_number: str) -> dict:
    account = call.world.account("+" + "".join(ch for ch in phone_number if ch.isdigit()))
    if account is None:
        raise RpcAnswer(400, "PHONE_NUMBER_INVALID")
    return account


def send_code(call: Call):
    account = _login_account(call, call.request.phone_number)
    if account["banned"]:
        raise RpcAnswer(400, "PHONE_NUMBER_BANNED")
    if account["dc_id"] != call.dc_id:
        raise RpcAnswer(303, f"PHONE_MIGRATE_{account['dc_id']}")
    phone_code_hash = secrets.token_hex(8)
    # The number as this request spelled it: Telegram holds a signIn to the same spelling.
    call.world.key_update(
        call.key["key_id"],
        phone=account["phone"],
        state="code_sent",
        phone_code_hash=phone_code_hash,
        code_phone=call.request.phone_number,
    )
    if account["login"] == "payment_required":
        return types.auth.SentCodePaymentRequired(
            store_product="org.telegram.telegramPremium.loginCode",
            phone_code_hash=phone_code_hash,
            support_email_address="sms@telegram.org",
            support_email_subject=f"Login code for {account['phone']}",
            premium_days=7,
            currency="USD",
            amount=499,
        )
    if account["login"] == "email_setup_required":
        return types.auth.SentCode(type=types.auth.SentCodeTypeSetUpEmailRequired(), phone_code_hash=phone_code_hash)
    return types.auth.SentCode(
        type=types.auth.SentCodeTypeApp(length=len(account["code"])), phone_code_hash=phone_code_hash
    )


def _authorize(call: Call, account: dict):
    call.world.key_update(call.key["key_id"], phone=account["phone"], state="authorized", srp_b=None)
    return types.auth.Authorization(user=tl.user(account, is_self=True))


def sign_in(call: Call):
    request = call.request
    account = _login_account(call, request.phone_number)
    key = call.key
    if (
        key["state"] != "code_sent"
        or key["code_phone"] != request.phone_number
        or key["phone_code_hash"] != request.phone_code_hash
    ):
        raise RpcAnswer(400, "PHONE_CODE_EXPIRED")
    if (request.phone_code or "").strip() != account["code"]:
        raise RpcAnswer(400, "PHONE_CODE_INVALID")
    if account["password"] is not None:
        call.world.key_update(key["key_id"], state="password_needed")
        raise RpcAnswer(401, "SESSION_PASSWORD_NEEDED")
    return _authorize(call, account)


def get_password(call: Call):
    key = call.key
    account = call.world.account(key["phone"]) if key["phone"] else None
    if key["state"] != "password_needed" or account is None:
        raise RpcAnswer(401, "AUTH_KEY_UNREGISTERED")
    b, public_b = srp.challenge(account["phone"], account["password"])
    srp_id = secrets.randbits(62)
    call.world.key_update(key["key_id"], srp_id=srp_id, srp_b=hex(b))
    return types.account.Password(
        new_algo=types.PasswordKdfAlgoUnknown(),
        new_secure_algo=types.SecurePasswordKdfAlgoUnknown(),
        secure_random=secrets.token_bytes(32),
        has_password=True,
        current_algo=srp.algo(account["phone"]),
        srp_B=public_b,
        srp_id=srp_id,
    )


def check_password(call: Call):
    key = call.key
    proof = call.request.password
    account = call.world.account(key["phone"]) if key["phone"] else None
    if key["state"] != "password_needed" or account is None or not key["srp_b"]:
        raise RpcAnswer(400, "PASSWORD_HASH_INVALID")
    if not isinstance(proof, types.InputCheckPasswordSRP) or proof.srp_id != key["srp_id"]:
        raise RpcAnswer(400, "SRP_ID_INVALID")
    if not srp.check(
        phone=account["phone"], password=account["password"], b=int(key["srp_b"], 16), a_bytes=proof.A, m1=proof.M1
    ):
        raise RpcAnswer(400, "PASSWORD_HASH_INVALID")
    return _authorize(call, account)


def export_authorization(call: Call):
    """A one-time token that logs a new key on another data centre in as this account."""
    account = call.me()
    token = secrets.token_bytes(32)
    call.world.key_open(f"export:{token.hex()}", call.request.dc_id)
    call.world.key_update(f"export:{token.hex()}", phone=account["phone"], state="exported")
    return types.auth.ExportedAuthorization(id=account["user_id"], bytes=token)


def import_authorization(call: Call):
    exported = call.world.key(f"export:{call.request.bytes.hex()}")
    if exported is None or exported["state"] != "exported" or exported["dc_id"] != call.dc_id:
        raise RpcAnswer(400, "AUTH_BYTES_INVALID")
    call.world.key_update(exported["key_id"], state="used")
    return _authorize(call, call.world.account(exported["phone"]))


HANDLERS = {
    functions.help.GetConfigRequest: get_config,
    functions.help.GetAppConfigRequest: get_app_config,
    functions.users.GetUsersRequest: get_users,
    functions.updates.GetStateRequest: get_state,
    functions.updates.GetDifferenceRequest: get_difference,
    functions.auth.SendCodeRequest: send_code,
    functions.auth.SignInRequest: sign_in,
    functions.account.GetPasswordRequest: get_password,
    functions.auth.CheckPasswordRequest: check_password,
    functions.auth.ExportAuthorizationRequest: export_authorization,
    functions.auth.ImportAuthorizationRequest: import_authorization,
}

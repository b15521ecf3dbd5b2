"""Logging an account in (code, then two-step password) and who it is, with its upload limit."""

from django.views.decorators.debug import sensitive_variables
from telethon import functions, types
from telethon.password import compute_check

from telegram.errors import AuthRequired, LoginRefused
from telegram.records import PART_SIZE, PREMIUM_UPLOAD_MAX_BYTES, UPLOAD_MAX_BYTES, AccountInfo
from telegram.telethon.errors import mapped_errors, maps_errors


class LoginCalls:
    @maps_errors
    async def send_code(self) -> str:
        # Sent as a plain request: Telethon's send_code_request breaks on the answers below.
        sent = await self._client(
            functions.auth.SendCodeRequest(self._login_phone, self._api_id, self._api_hash, types.CodeSettings())
        )
        if isinstance(sent, types.auth.SentCodePaymentRequired):
            raise LoginRefused(
                "Telegram asks for a payment before it sends a login code to this number. Log in once in an "
                "official Telegram app on a phone, then ask for a code here again.",
                rpc="SENT_CODE_PAYMENT_REQUIRED",
            )
        if isinstance(getattr(sent, "type", None), types.auth.SentCodeTypeSetUpEmailRequired):
            raise LoginRefused(
                "Telegram wants a login email set up for this number first. Open an official Telegram app, set "
                "up the login email it asks for, then ask for a code here again.",
                rpc="SENT_CODE_EMAIL_SETUP_REQUIRED",
            )
        return sent.phone_code_hash

    @maps_errors
    async def sign_in_code(self, *, code: str, phone_code_hash: str) -> AccountInfo:
        user = await self._client.sign_in(phone=self._login_phone, code=code, phone_code_hash=phone_code_hash)
        return await self._remember_me(user)

    @sensitive_variables("password")
    async def sign_in_password(self, *, password: str) -> AccountInfo:
        # The SRP proof is computed here rather than in Telethon's sign_in, and errors are mapped inside
        # (not by a decorator holding the arguments), so no frame but this one, whose variables error
        # reports hide, ever holds the password.
        with mapped_errors():
            algorithm = await self._client(functions.account.GetPasswordRequest())
            result = await self._client(functions.auth.CheckPasswordRequest(compute_check(algorithm, password)))
            return await self._remember_me(result.user)

    @maps_errors
    async def get_me(self) -> AccountInfo:
        # Asked directly: Telethon's get_me() turns every 401 into None, USER_DEACTIVATED_BAN included.
        users = await self._client(functions.users.GetUsersRequest([types.InputUserSelf()]))
        if not users or not isinstance(users[0], types.User):
            raise AuthRequired("This Telegram session is not logged in.")
        return await self._remember_me(users[0])

    async def _upload_limits(self) -> tuple[int, int]:
        """Bytes a file upload may have, for other accounts and for Premium, from Telegram's app config."""
        config = await self._client(functions.help.GetAppConfigRequest(hash=0))
        values = {}
        if isinstance(config, types.help.AppConfig) and isinstance(config.config, types.JsonObject):
            values = {item.key: item.value for item in config.config.value}

        def limit(key: str, default: int) -> int:
            value = values.get(key)
            return round(value.value * PART_SIZE) if isinstance(value, types.JsonNumber) else default

        return (
            limit("upload_max_fileparts_default", UPLOAD_MAX_BYTES),
            limit("upload_max_fileparts_premium", PREMIUM_UPLOAD_MAX_BYTES),
        )

    async def _remember_me(self, user: types.User) -> AccountInfo:
        if user.phone and user.phone.lstrip("+") != self.phone.lstrip("+"):
            raise AuthRequired("This stored session belongs to another Telegram account; log in again.")
        default_limit, premium_limit = await self._upload_limits()
        self._me = AccountInfo(
            user_id=user.id,
            phone=self.phone,
            first_name=user.first_name or "",
            last_name=user.last_name or "",
            username=user.username or "",
            premium=bool(user.premium),
            upload_max_bytes=premium_limit if user.premium else default_limit,
        )
        return self._me

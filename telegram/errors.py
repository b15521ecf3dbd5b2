"""One error taxonomy for every gateway; each adapter maps its errors here once."""


class TelegramError(Exception):
    retryable = False

    def __init__(self, message: str = "", *, rpc: str = ""):
        super().__init__(message or self.__class__.__doc__ or self.__class__.__name__)
        self.rpc = rpc  # the underlying Telegram error name, for logs


class FloodWait(TelegramError):
    """Telegram asks to wait before the next request."""

    retryable = True

    def __init__(self, seconds: int, message: str = "", *, rpc: str = "FLOOD_WAIT"):
        super().__init__(message or f"Telegram asks to wait {seconds} s ({rpc}).", rpc=rpc)
        self.seconds = seconds

    @property
    def retry_after(self) -> int:
        return self.seconds


class AccountRestricted(TelegramError):
    """The account is limited by Telegram (PEER_FLOOD, banned, deactivated)."""


class AuthRequired(TelegramError):
    """The session is no longer valid; the operator must log in again."""


class TargetForbidden(TelegramError):
    """This chat or topic cannot be read or written by the account."""


class FileReferenceExpired(TelegramError):
    """The media handle is too old; re-fetch the message or re-upload."""

    retryable = True


class NotFound(TelegramError):
    """The message or chat is gone."""


class TransientError(TelegramError):
    """Network trouble, timeouts, RPC_CALL_FAIL: retry with backoff."""

    retryable = True


class SessionInUse(TransientError):
    """Another process is using this account's Telegram session; it is tried again later."""


class FileTooLarge(TelegramError):
    """The file is above the account's upload limit."""


class LoginError(TelegramError):
    """A login step failed in a way the operator can fix and retry."""

    retryable = True


class PhoneInvalid(LoginError):
    """Telegram does not accept this phone number."""

    retryable = False


class LoginRefused(LoginError):
    """Telegram will not send a login code now (a payment or a login email first, too many tries)."""

    retryable = False


class CodeInvalid(LoginError):
    """The login code is wrong."""


class CodeExpired(LoginError):
    """The login code expired; ask for a new one."""


class PasswordRequired(LoginError):
    """The account has two-step verification; its password is needed."""


class PasswordInvalid(LoginError):
    """The two-step verification password is wrong."""

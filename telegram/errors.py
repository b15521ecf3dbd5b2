"""One error taxonomy for every gateway; each adapter maps its errors here once."""


class TelegramError(Exception):
    """Telegram refused the request."""

    def __init__(self, message: str = "", *, rpc: str = ""):
        # The class's words without their full stop: callers go on after them ("…: {error}. It is tried again").
        super().__init__(message or (self.__class__.__doc__ or self.__class__.__name__).rstrip("."))
        self.rpc = rpc  # the underlying Telegram error name, for logs


class FloodWait(TelegramError):
    """Telegram asks to wait before the next request."""

    def __init__(self, seconds: int, message: str = "", *, rpc: str = "FLOOD_WAIT"):
        super().__init__(message or f"Telegram asks to wait {seconds} s ({rpc}).", rpc=rpc)
        self.seconds = seconds

    @property
    def retry_after(self) -> int:
        return self.seconds


class AccountRestricted(TelegramError):
    """Telegram has limited this account (a spam limit, a ban or a deactivation)."""


class AuthRequired(TelegramError):
    """This account's Telegram session is no longer valid; log in again."""


class TargetForbidden(TelegramError):
    """This account cannot read or post in this chat or topic."""


class FileReferenceExpired(TelegramError):
    """Telegram's link to this file has expired; it is fetched again."""


class NotFound(TelegramError):
    """The message or chat is gone from Telegram."""


class TransientError(TelegramError):
    """Telegram could not be reached or did not answer in time; it is tried again."""


class SessionInUse(TransientError):
    """Another process is using this account's Telegram session; it is tried again later."""


class LimitReached(TelegramError):
    """This account has reached one of Telegram's limits (too many channels and groups)."""


class FileTooLarge(TelegramError):
    """The file is above this account's upload limit."""


class LoginError(TelegramError):
    """This login step failed; try it again."""


class PhoneInvalid(LoginError):
    """Telegram does not accept this phone number."""


class LoginRefused(LoginError):
    """Telegram will not send a login code now (a payment or a login email first, too many tries)."""


class CodeInvalid(LoginError):
    """The login code is wrong."""


class CodeExpired(LoginError):
    """The login code expired; ask for a new one."""


class PasswordRequired(LoginError):
    """The account has two-step verification; its password is needed."""


class PasswordInvalid(LoginError):
    """The two-step verification password is wrong."""

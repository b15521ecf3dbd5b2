"""Injected failures of the sandbox world (DESIGN.md, `faults`).

A fault matches a request by operation and optionally by account, chat and message;
it lets `after` matching requests through, then fails the next `times` of them. The
counters live in the world database, so every process of a stack shares them.
"""

OPS = ("download", "upload", "send", "history", "join", "create", "connect", "any")
ERRORS = (
    "flood_wait",
    "file_reference_expired",
    "network",
    "peer_flood",
    "write_forbidden",
    "crash",
    "part_lost",
    "replace_document",
)
# A saved file part Telegram answers as kept but does not have when the file is used (FILE_PART_X_MISSING).
PART_LOST = "part_lost"
# The fault's message gets a new file (an edit) just before the request: a download goes on with a dead reference.
REPLACE_DOCUMENT = "replace_document"


class RpcAnswer(Exception):
    """An error Telegram answers a request with (error_code, error_message), e.g. (420, "FLOOD_WAIT_5")."""

    def __init__(self, code: int, message: str):
        super().__init__(f"{code} {message}")
        self.code = code
        self.message = message


class SandboxCrash(BaseException):
    """The process 'dies' here. A BaseException, so `except Exception` handlers let it through."""


class FaultError(ValueError):
    """A fault in the world file is malformed."""


def fault_parse(spec: dict) -> dict:
    """The fault as stored, with defaults; FaultError says what is wrong."""
    if not isinstance(spec, dict):
        raise FaultError(f"a fault must be an object, got {spec!r}")
    op, error = spec.get("op"), spec.get("error")
    if op not in OPS:
        raise FaultError(f"fault op {op!r} is not one of {', '.join(OPS)}")
    if error not in ERRORS:
        raise FaultError(f"fault error {error!r} is not one of {', '.join(ERRORS)}")
    fault = {
        "op": op,
        "error": error,
        "account": spec.get("account"),
        "chat": spec.get("chat"),
        "message": spec.get("message"),
        "seconds": spec.get("seconds", 1),
        "times": spec.get("times", 1),
        "after": spec.get("after", 0),
    }
    if error == REPLACE_DOCUMENT and (fault["chat"] is None or fault["message"] is None):
        raise FaultError("a replace_document fault needs the chat and the message whose file it replaces")
    for key in ("chat", "message"):
        if fault[key] is not None and not isinstance(fault[key], int):
            raise FaultError(f"fault {key} must be an integer id, got {fault[key]!r}")
    for key in ("seconds", "times", "after"):
        if not isinstance(fault[key], int) or fault[key] < 0:
            raise FaultError(f"fault {key} must be a non-negative integer, got {fault[key]!r}")
    return fault


def fault_error(*, error: str, seconds: int) -> BaseException:
    """What a firing fault does to the request: Telegram's error answer, a dropped connection, or a crash."""
    if error == "flood_wait":
        return RpcAnswer(420, f"FLOOD_WAIT_{seconds}")
    if error == "file_reference_expired":
        return RpcAnswer(400, "FILE_REFERENCE_EXPIRED")
    if error == "network":
        return ConnectionError("Sandbox network failure.")
    if error == "peer_flood":
        return RpcAnswer(400, "PEER_FLOOD")
    if error == "write_forbidden":
        return RpcAnswer(403, "CHAT_WRITE_FORBIDDEN")
    return SandboxCrash("Sandbox fault: the process crashes here.")

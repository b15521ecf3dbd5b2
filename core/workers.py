"""Which process this is, and whether another one is surely gone: the rule run take-overs and session leases
share. Imports nothing of Django's models, so the Telegram seam can use it before apps are loaded."""

import os
import socket
import time

_PROCESS_STARTED = int(time.time())


def worker_id() -> str:
    """host-pid-start: unique per process, readable in the UI and logs."""
    return f"{socket.gethostname()}-{os.getpid()}-{_PROCESS_STARTED}"


def worker_gone(holder: str) -> bool:
    """Whether the process a worker_id names is surely gone: it ran on this host, and its pid is no more."""
    host, _, pid = holder.rpartition("-")[0].rpartition("-")  # host-pid-start; a host name may hold dashes
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, under another user
        pass
    return False

"""The listing children's fork server: one process per parent, started on the first listing, that imports the
readers, Pillow, numpy and trimesh once and forks a child for each request (a new Python importing them took
longer than most listings).

For each request the parent makes a socket pair and hands one end to the server (SCM_RIGHTS). The child forked
for it says its pid, reads the request, writes its answer and exits; the server, once it has reaped the child,
writes how it ended. Every message is a frame: one letter and a length-prefixed body."""

import contextlib
import importlib
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

PID, REQUEST, ANSWER, STATUS = b"P", b"R", b"A", b"S"
_HEADER = struct.Struct("!cI")
_PROJECT_ROOT = Path(__file__).resolve().parent.parent.parent
# What every child needs loaded: the readers (child.py imports them), the thumbnail and model-preview makers.
_WARM = (
    "packages.archives.child",
    "packages.archives.model_previews",
    "packages.archives.render",
    "packages.archives.sevenzip_format",
    "packages.archives.rar_format",
    "py7zr.io",
    "PIL.Image",
    "PIL.ImageOps",
    "trimesh",
)


class ForkServer:
    """The parent's side: `run(request, timeout)`, safe to call from several threads at once."""

    def __init__(self):
        self._lock = threading.Lock()
        self._server: subprocess.Popen | None = None
        self._control: socket.socket | None = None
        self._owner = 0

    def run(self, request: dict, timeout: float) -> tuple[dict | None, int | None]:
        """The child's answer to `request` (None when it died first, with its exit code when the server said
        it); TimeoutError, the child killed, when no answer came within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        ours, theirs = socket.socketpair()
        with ours:
            try:
                self._hand(theirs)
            finally:
                theirs.close()
            ours.sendall(_frame(REQUEST, json.dumps(request).encode()))
            pid = code = None
            while True:
                left = deadline - time.monotonic()
                try:
                    if left <= 0:
                        raise TimeoutError
                    ours.settimeout(left)
                    kind, body = _frame_read(ours)
                except TimeoutError:
                    pid = pid or _pid_said(ours)
                    if pid is not None:
                        with contextlib.suppress(ProcessLookupError):
                            os.kill(pid, signal.SIGKILL)
                    raise  # a child not forked yet finds the socket closed and exits at its first word
                if kind == ANSWER:
                    return json.loads(body), None
                if kind == PID:
                    pid = int(body)
                elif kind == STATUS:
                    code = int(body)
                elif kind is None:
                    return None, code

    def _hand(self, theirs: socket.socket) -> None:
        """Give the server the child's end of the socket pair; a server that died is started again, once."""
        with self._lock:
            for attempt in range(2):
                if self._server is None or self._owner != os.getpid() or self._server.poll() is not None:
                    self._start()
                try:
                    socket.send_fds(self._control, [b"r"], [theirs.fileno()])
                    return
                except OSError:
                    if attempt:
                        raise
                    self._server = None

    def _start(self) -> None:
        if self._control is not None and self._owner == os.getpid():
            self._control.close()
        self._control, server_end = socket.socketpair()
        python_path = os.pathsep.join(filter(None, [str(_PROJECT_ROOT), os.environ.get("PYTHONPATH")]))
        # One BLAS thread: a thread pool would reserve address space the children's memory ceiling refuses, and
        # its threads would not survive the fork.
        env = {**os.environ, "PYTHONPATH": python_path, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
        with server_end:
            self._server = subprocess.Popen(
                [sys.executable, "-m", "packages.archives", str(server_end.fileno())],
                pass_fds=[server_end.fileno()],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                env=env,
                cwd=_PROJECT_ROOT,
            )
        self._owner = os.getpid()


def serve(control_fd: int, child_run: Callable[[dict], dict]) -> None:
    """The server's loop: a child for each socket the parent hands over, until the parent is gone."""
    # Ctrl-C reaches the whole process group: the server ends with its parent, not with a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for module in _WARM:
        importlib.import_module(module)
    control = socket.socket(fileno=control_fd)
    woken, wake = os.pipe()
    os.set_blocking(wake, False)
    signal.set_wakeup_fd(wake)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # only to wake the select below
    running: dict[int, socket.socket] = {}
    while True:
        ready, _, _ = select.select([control, woken], [], [])
        if woken in ready:
            os.read(woken, 4096)
            _reap(running)
        if control in ready:
            try:
                message, fds, _, _ = socket.recv_fds(control, 1, 1)
            except OSError:
                message, fds = b"", []
            if not message:
                return  # the parent is gone; running children finish on their own
            for fd in fds:
                ends = socket.socket(fileno=fd)
                pid = os.fork()
                if pid == 0:
                    _child(ends, child_run, keep_out=[control, *running.values()], pipes=[woken, wake])
                running[pid] = ends


def _child(ends: socket.socket, child_run: Callable[[dict], dict], *, keep_out, pipes) -> None:
    """One request, one answer, then out: never returns to the server's loop."""
    code = 1
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # a child stops at Ctrl-C, quietly
        for other in keep_out:
            other.close()
        for fd in pipes:
            os.close(fd)
        # What hostile bytes make a library print goes nowhere, as the parent never read it.
        quiet = os.open(os.devnull, os.O_WRONLY)
        os.dup2(quiet, 1)
        os.dup2(quiet, 2)
        ends.sendall(_frame(PID, str(os.getpid()).encode()))
        kind, body = _frame_read(ends)
        if kind == REQUEST:
            ends.sendall(_frame(ANSWER, json.dumps(child_run(json.loads(body))).encode()))
            code = 0
    finally:
        os._exit(code)


def _reap(running: dict[int, socket.socket]) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        ends = running.pop(pid, None)
        if ends is None:
            continue
        ends.setblocking(False)  # a parent that stopped reading never holds up the server
        with contextlib.suppress(OSError):
            # A request the child never read is read here: closed unread, it would reset the parent's side
            # before the status reached it.
            while ends.recv(1 << 16):
                pass
        with contextlib.suppress(OSError):
            ends.send(_frame(STATUS, str(os.waitstatus_to_exitcode(status)).encode()))
        ends.close()


def _pid_said(ours: socket.socket) -> int | None:
    """The child's pid when it is already in the socket: the deadline came between its word and our reading."""
    ours.setblocking(False)
    with contextlib.suppress(OSError):
        kind, body = _frame_read(ours)
        if kind == PID:
            return int(body)
    return None


def _frame(kind: bytes, body: bytes) -> bytes:
    return _HEADER.pack(kind, len(body)) + body


def _frame_read(ends: socket.socket) -> tuple[bytes | None, bytes]:
    """The next frame, or (None, b"") once the other side closed."""
    header = _exactly(ends, _HEADER.size)
    if header is None:
        return None, b""
    kind, size = _HEADER.unpack(header)
    body = _exactly(ends, size)
    return (kind, body) if body is not None else (None, b"")


def _exactly(ends: socket.socket, size: int) -> bytes | None:
    chunks, wanted = [], size
    while wanted:
        try:
            chunk = ends.recv(min(wanted, 1 << 20))
        except ConnectionResetError:
            return None
        if not chunk:
            return None
        chunks.append(chunk)
        wanted -= len(chunk)
    return b"".join(chunks)

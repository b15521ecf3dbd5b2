"""`make test`: pytest against the real embedded servers and an S3-protocol server of its own."""

import os
import sys

from config.devstack.base import ROOT, Stack, _base_env, _ForwardSignals
from config.devstack.embedded import TestObjectStore, start_services, stop_services
from config.env import envint

# Options by which the caller picks the test processes themselves.
_XDIST_OPTIONS = ("-n", "--numprocesses", "--dist", "--maxprocesses", "no:xdist")
# Options that want one process: stop at the first failure, or step into a debugger.
_SERIAL_OPTIONS = ("-x", "--exitfirst", "--maxfail", "--pdb", "--trace", "-s", "--capture", "--sw", "--stepwise")


def pytest_workers() -> int:
    """How many test processes `make test` runs: STASHCAST_TEST_WORKERS, else one a core and at least six
    (the tests mostly wait on sockets, sleeps and worker processes: six kept two cores busier than four)."""
    return envint("STASHCAST_TEST_WORKERS", max(6, os.cpu_count() or 1), minimum=1)


def pytest_runs(args: list[str], *, workers: int) -> list[list[str]]:
    """The pytest command lines `make test ARGS` runs, one after the other.

    The whole suite, or a folder of it: every test but those that must run alone (they restart the shared
    PostgreSQL) on `workers` processes, then those alone. One file (or tests of one file), -x or a debugger: one
    process, which starts sooner than several. An -n of the caller's own is taken as it is; so is a
    --tests-alone of its own (`make test-fast` leaves those tests out: no second run to start).
    """
    words = [word.split("=", 1)[0] for word in args]
    if any(word in _XDIST_OPTIONS or word.startswith("-n") and word[2:].isdigit() for word in words):
        return [args]
    files = {word.split("::")[0] for word in args if word.endswith(".py") or "::" in word}
    if workers < 2 or len(files) == 1 or any(word in _SERIAL_OPTIONS for word in words):
        return [args]
    if "--tests-alone" in words:
        return [["-n", str(workers), "--dist", "worksteal", *args]]
    return [
        ["-n", str(workers), "--dist", "worksteal", "--tests-alone=skip", *args],
        ["-p", "no:xdist", "--tests-alone=only", *args],
    ]


def _exit_code(codes: list[int]) -> int:
    """One exit code for several pytest runs: the first failure; 5 (no tests) only when no run had tests."""
    failures = [code for code in codes if code not in (0, 5)]
    if failures:
        return failures[0]
    return 5 if all(code == 5 for code in codes) else 0


def command_test(stack: Stack, args: list[str]) -> int:
    stack.var.mkdir(parents=True, exist_ok=True)
    service_env, used = start_services(stack, durable=False)
    object_store = TestObjectStore(stack.var / "test-s3.log")
    try:
        env = _base_env(stack, service_env)
        env["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
        env["STASHCAST_IGNORE_STACK_ENV"] = "true"
        if not env.get("TEST_S3_ENDPOINT"):
            object_store.start()
            env["TEST_S3_ENDPOINT"] = object_store.endpoint
        codes = []
        with _ForwardSignals(sigint=False) as forward:
            for run in pytest_runs(args, workers=pytest_workers()):
                codes.append(forward.run([sys.executable, "-m", "pytest", *run], env=env, cwd=ROOT))
                if forward.received or codes[-1] in (2, 3, 4):  # interrupted, or pytest itself failed
                    break
        return _exit_code(codes)
    finally:
        object_store.stop()
        stop_services(stack, used)

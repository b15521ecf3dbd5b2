"""`make run` itself, unattended: each process killed in turn comes back while the stack keeps serving; its Redis
flushed and down for 8 s in the middle of a fan-out ends with the run a success, every group once, and `make run`
still running. Each test starts a whole stack (about a minute) and is bounded in time."""

import os
import signal
import time

import pytest
import redis

from config.devstack.supervise import rpc
from tests.support.make_run import RESUME, MakeRun, flash_sale_per_group, flash_sale_progress

pytestmark = pytest.mark.processes  # a whole `make run` stack each, on ports and a var/ of its own


def test_each_process_killed_in_turn_comes_back_and_the_stack_keeps_serving(tmp_path):
    stack = MakeRun(tmp_path)
    try:
        stack.wait_started()
        killed = ["web", "worker", "beat", "flower", "bot", "postgres", "redis"]
        for name in killed:
            before = stack.info(name)["pid"]
            os.kill(before, signal.SIGKILL)
            stack.wait_for(
                lambda name=name, before=before: (
                    (info := stack.info(name))["statename"] == "RUNNING" and info["pid"] != before
                ),
                90,
                f"{name} started again",
                log=name,
            )
            stack.wait_for(stack.serving, 90, f"the dashboard serving after {name} was killed")

        # A process may still be starting again: a worker can end on its own when Redis goes, and is restarted.
        stack.wait_for(lambda: stack.status().returncode == 0, 90, "every process running", log="worker")
        status = stack.status()
        rows = {line.split()[0]: line.split() for line in status.stdout.splitlines()[1:] if line.strip()}
        for name in killed:
            assert rows[name][1] == "RUNNING" and int(rows[name][-1]) >= 1, status.stdout
        assert f"{killed[0]} ended unexpectedly; started again" in stack.said()
    finally:
        stack.stop()
    assert stack.status().returncode == 3  # not running: said so, as systemctl does


def test_redis_flushed_and_down_mid_fanout_the_run_ends_success_every_group_once_and_make_run_never_exits(tmp_path):
    # A slower pace, so the fan-out is under way when Redis goes; a stuck run is re-queued within a minute.
    pace = {"REMINDER_MAX_SEND_PER_MINUTE": "20", "WORK_STALE_AFTER_SECONDS": "30", "RUNS_REAP_EVERY_SECONDS": "10"}
    stack = MakeRun(tmp_path, **pace)
    try:
        stack.wait_started()
        status, sent, total = flash_sale_progress(stack)
        assert status == "paused" and sent < total  # the demo's flash sale: the window closed yesterday
        stack.manage(RESUME)
        stack.wait_for(lambda: flash_sale_progress(stack)[1] > sent, 120, "the fan-out under way")

        redis.Redis(port=stack.stack.redis_port).flushall()
        control = rpc(stack.stack).supervisor
        control.stopProcess("redis")
        time.sleep(8)
        control.startProcess("redis")

        stack.wait_for(lambda: flash_sale_progress(stack)[0] == "success", 300, "the run ended success")
        assert flash_sale_per_group(stack) == [1] * total
        assert stack.process.poll() is None
        assert stack.serving()
    finally:
        stack.stop()

"""The Redis token bucket: a burst, then an even pace, shared by processes and by consecutive users."""

import asyncio
import json
import os
import subprocess
import sys
import time
import uuid

import pytest
from django.conf import settings

from core.ratelimit import TokenBucket, account_send_bucket


def bucket(per_minute: float = 600, capacity: int = 3) -> TokenBucket:
    return TokenBucket(f"test:{uuid.uuid4().hex}", per_minute=per_minute, capacity=capacity)


def assert_paced(stamps: list[float], *, rate: float, capacity: int, slack: float) -> None:
    """No stretch of time holds more than the burst plus what refilled in it (plus `slack` tokens)."""
    stamps = sorted(stamps)
    for first in range(len(stamps)):
        for last in range(first, len(stamps)):
            allowed = capacity + rate * (stamps[last] - stamps[first]) + slack
            assert last - first + 1 <= allowed, (
                f"{last - first + 1} tokens in {stamps[last] - stamps[first]:.3f} s; at most {allowed:.2f} allowed"
            )


def test_a_burst_then_one_token_every_1_over_rate_seconds():
    shared = bucket(per_minute=600, capacity=3)
    waits = [shared.reserve() for _ in range(6)]

    assert waits[:3] == [0, 0, 0]
    assert waits[3:] == pytest.approx([0.1, 0.2, 0.3], abs=0.02), "reserved in order, 100 ms apart"


def test_it_refills_up_to_its_capacity_only():
    shared = bucket(per_minute=6000, capacity=2)  # 100 tokens a second
    for _ in range(2):
        shared.reserve()
    time.sleep(0.2)  # 20 tokens' worth of time

    waits = [shared.reserve() for _ in range(3)]

    assert waits[:2] == [0, 0] and waits[2] > 0


def test_acquire_waits_for_the_token():
    shared = bucket(per_minute=1200, capacity=1)  # one every 50 ms

    async def take(count: int) -> float:
        started = time.monotonic()
        for _ in range(count):
            await shared.acquire()
        return time.monotonic() - started

    assert asyncio.run(take(5)) == pytest.approx(0.2, abs=0.05)


def test_a_pause_holds_every_token_back_then_refills_from_empty():
    shared = bucket(per_minute=600, capacity=3)
    shared.pause(0.5)

    waits = [shared.reserve() for _ in range(2)]

    assert waits == pytest.approx([0.6, 0.7], abs=0.03), "nothing during the pause, no burst after it"


def test_two_users_of_one_name_share_the_budget():
    name = f"test:{uuid.uuid4().hex}"
    first = TokenBucket(name, per_minute=600, capacity=3)
    for _ in range(3):
        first.reserve()

    second = TokenBucket(name, per_minute=600, capacity=3)

    assert second.reserve() == pytest.approx(0.1, abs=0.02), "the second run starts where the first left off"


@pytest.mark.parametrize(("per_minute", "capacity"), [(0, 3), (-1, 3), (40, 0)])
def test_a_bucket_needs_a_positive_rate_and_capacity(per_minute, capacity):
    with pytest.raises(ValueError):
        TokenBucket("test:bad", per_minute=per_minute, capacity=capacity)


def test_the_send_budget_of_an_account_comes_from_the_settings(settings):
    settings.REMINDER_MAX_SEND_PER_MINUTE = 40
    settings.REMINDER_SEND_BURST = 3

    send = account_send_bucket(account_id=7)

    assert (send.key, send.capacity, send.rate) == ("stashcast:ratelimit:send:account:7", 3, pytest.approx(40 / 60))


@pytest.mark.processes
def test_two_processes_taking_from_one_bucket_keep_its_pace_together(tmp_path):
    name, per_minute, capacity, count = f"test:{uuid.uuid4().hex}", 600, 3, 15
    go_file = tmp_path / "go"
    workers = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.core.ratelimit_worker",
                name,
                str(count),
                str(per_minute),
                str(capacity),
                str(go_file),
            ],
            cwd=settings.BASE_DIR,
            env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"},
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    time.sleep(1.5)  # both processes are set up and waiting
    go_file.touch()
    stamps = []
    for worker in workers:
        out, _ = worker.communicate(timeout=60)
        assert worker.returncode == 0
        stamps.append(json.loads(out.strip().splitlines()[-1]))

    together = sorted(stamps[0] + stamps[1])
    rate = per_minute / 60
    assert_paced(together, rate=rate, capacity=capacity, slack=1)
    took = together[-1] - together[0]
    assert took == pytest.approx((2 * count - capacity) / rate, abs=0.3), "one budget, not one each"
    first_half = together[len(together) // 2]
    assert min(stamps[0]) < first_half and min(stamps[1]) < first_half, "the processes took turns"

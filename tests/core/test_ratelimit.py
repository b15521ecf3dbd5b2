"""The Redis token bucket: a burst, then an even pace, shared by processes and by consecutive users."""

import asyncio
import json
import os
import subprocess
import sys
import time
import uuid

import pytest
import redis
from django.conf import settings

from core.ratelimit import KEY_PREFIX, BucketHalted, TokenBucket, account_send_bucket
from tests.support.processes import assert_paced
from tests.support.start_line import go_when_ready


def bucket(per_minute: float = 600, capacity: int = 3) -> TokenBucket:
    return TokenBucket(f"test:{uuid.uuid4().hex}", per_minute=per_minute, capacity=capacity)


def test_a_burst_then_one_token_every_1_over_rate_seconds():
    shared = bucket(per_minute=600, capacity=3)
    paces = [shared.take() for _ in range(6)]

    assert [pace.wait for pace in paces[:3]] == [0, 0, 0]
    # Due times on Redis's clock, from the first take: however late a loaded machine makes the calls.
    after_first = [pace.due - paces[0].due for pace in paces[3:]]
    assert after_first == pytest.approx([0.1, 0.2, 0.3], abs=0.005), "reserved in order, 100 ms apart"


def test_it_refills_up_to_its_capacity_only():
    # 10 tokens a second: the third token's 100 ms wait outlasts the reserves themselves on a loaded machine.
    shared = bucket(per_minute=600, capacity=2)
    for _ in range(2):
        shared.reserve()
    time.sleep(0.5)  # 5 tokens' worth of time

    waits = [shared.reserve() for _ in range(3)]

    assert waits[:2] == [0, 0] and waits[2] > 0


def test_acquire_waits_for_the_token():
    shared = bucket(per_minute=1200, capacity=1)  # one every 50 ms

    async def take(count: int) -> float:
        started = time.monotonic()
        for _ in range(count):
            await shared.acquire()
        return time.monotonic() - started

    # The first token is there; four more come 50 ms apart. A loaded machine wakes late, never early.
    assert 0.19 <= asyncio.run(take(5)) < 1.0


def test_a_token_given_up_before_its_turn_goes_to_the_next_sender():
    shared = bucket(per_minute=60, capacity=1)  # one a second: given up long before its turn, however loaded
    shared.reserve()  # the burst is spent
    due = []

    async def give_up() -> None:
        async def heard(pace):
            due.append(pace.due)

        waiting = asyncio.ensure_future(shared.acquire(taken=heard))
        while not due:
            await asyncio.sleep(0.005)
        waiting.cancel()  # Pause, Cancel or a lost lock, while it waits for its turn
        await asyncio.gather(waiting, return_exceptions=True)

    asyncio.run(give_up())

    assert shared.take().due == pytest.approx(due[0], abs=0.01), "its turn, not the one after"


def test_a_pause_holds_every_token_back_then_refills_from_empty():
    shared = bucket(per_minute=600, capacity=3)
    seconds, microseconds = redis.Redis.from_url(settings.REDIS_URL).time()  # the bucket's clock
    shared.pause(0.5)

    dues = [shared.take().due - (seconds + microseconds / 1e6) for _ in range(2)]

    assert 0.6 <= dues[0] < 0.7, "nothing during the pause, and the first token after it refilled from empty"
    assert dues[1] - dues[0] == pytest.approx(0.1, abs=0.005), "no burst after it"


def test_two_users_of_one_name_share_the_budget():
    name = f"test:{uuid.uuid4().hex}"
    first = TokenBucket(name, per_minute=600, capacity=3)
    started = [first.take().due for _ in range(3)][0]

    second = TokenBucket(name, per_minute=600, capacity=3)

    assert second.take().due - started == pytest.approx(0.1, abs=0.005), "the second starts where the first left off"


@pytest.mark.parametrize(("per_minute", "capacity"), [(0, 3), (-1, 3), (40, 0)])
def test_a_bucket_needs_a_positive_rate_and_capacity(per_minute, capacity):
    with pytest.raises(ValueError):
        TokenBucket("test:bad", per_minute=per_minute, capacity=capacity)


def test_the_send_budget_of_an_account_comes_from_the_settings(settings):
    settings.REMINDER_MAX_SEND_PER_MINUTE = 40
    settings.REMINDER_SEND_BURST = 3

    send = account_send_bucket(account_id=7)

    assert (send.key, send.capacity, send.rate) == ("stashcast:ratelimit:send:account:7", 3, pytest.approx(40 / 60))


@pytest.mark.alone  # measures a pace
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
    go_when_ready(go_file, workers)  # both processes are set up and waiting
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


# The adaptive pace ---------------------------------------------------------------------------------------------------


def adaptive(per_minute: float = 600, **options) -> TokenBucket:
    return TokenBucket(f"test:{uuid.uuid4().hex}", per_minute=per_minute, capacity=3, **options)


def test_lowering_multiplies_the_pace_down_to_its_floor_and_pauses():
    shared = adaptive(600)

    lowered = shared.lower(factor=0.5, floor_per_minute=200, pause_seconds=0.3, recover_to=0.9)

    assert (lowered.per_minute, lowered.before_per_minute, lowered.changed) == (pytest.approx(300), 600, True)
    assert lowered.cap_per_minute == pytest.approx(540)
    assert shared.reserve() == pytest.approx(0.3 + 60 / 300, abs=0.03), "the pause, then one token at the new pace"
    time.sleep(0.35)
    floored = shared.lower(factor=0.5, floor_per_minute=200, pause_seconds=0, recover_to=0.9)
    assert floored.per_minute == pytest.approx(200), "never below the floor"


def test_answers_during_a_lowering_pause_lower_nothing_more():
    shared = adaptive(600)
    first = shared.lower(factor=0.5, floor_per_minute=1, pause_seconds=0.5, recover_to=0.9)

    again = shared.lower(factor=0.5, floor_per_minute=1, pause_seconds=0.5, recover_to=0.9)

    assert first.changed and not again.changed and again.per_minute == pytest.approx(300)


def test_clean_takes_raise_the_pace_step_by_step_up_to_its_cap_never_the_ceiling():
    shared = adaptive(6000, raise_every=2, raise_step_per_minute=600)
    shared.lower(factor=0.5, floor_per_minute=1, pause_seconds=0, recover_to=0.8)  # 3000, cap 4800

    paces = [shared.take() for _ in range(12)]

    raised = [pace.per_minute for pace in paces if pace.changed]
    assert raised == pytest.approx([3600, 4200, 4800]), "one step every 2 clean takes, until 80 % of 6000"
    assert shared.state().per_minute == pytest.approx(4800)


def test_a_halt_stops_every_taker_of_the_bucket_until_lifted():
    name = f"test:{uuid.uuid4().hex}"
    mine, theirs = (TokenBucket(name, per_minute=600, capacity=3) for _ in range(2))

    mine.halt(until=time.time() + 60)

    with pytest.raises(BucketHalted) as halted:
        theirs.take()
    assert halted.value.until == pytest.approx(time.time() + 60, abs=1)
    assert theirs.state().halted_until == pytest.approx(halted.value.until)
    mine.halt(until=0)
    assert theirs.take().wait == 0


def test_a_bucket_redis_does_not_hold_starts_at_its_start_pace_under_the_ceiling():
    assert adaptive(600, start_per_minute=120).state().per_minute == pytest.approx(120)
    assert adaptive(600, start_per_minute=6000).state().per_minute == pytest.approx(600), "capped by the ceiling"


def _forget(bucket_: TokenBucket) -> None:
    """Redis restarted without its data, or evicted the bucket."""
    redis.Redis.from_url(settings.REDIS_URL).delete(bucket_.key)


def test_a_bucket_redis_forgot_starts_from_its_last_spend_not_full():
    name = f"test:{uuid.uuid4().hex}"
    shared = TokenBucket(name, per_minute=600, capacity=3)
    due = [shared.take().due for _ in range(6)]  # the burst, then three reserved ahead (Redis's clock)
    _forget(shared)

    # What the database recorded: the last token handed out was due then.
    again = TokenBucket(name, per_minute=600, capacity=3, start_spent=max(due))
    due += [again.take().due for _ in range(6)]

    assert_paced(due, rate=10, capacity=3, slack=0.1)
    assert min(due[6:]) == pytest.approx(max(due[:6]) + 0.1, abs=0.02), "next in line after the last reserved"


def test_a_bucket_forgotten_long_after_its_last_spend_starts_full_again():
    name = f"test:{uuid.uuid4().hex}"
    quiet = TokenBucket(name, per_minute=600, capacity=3, start_spent=time.time() - 1)  # refilled meanwhile

    started = time.monotonic()
    waits = [quiet.reserve() for _ in range(4)]
    elapsed = time.monotonic() - started

    assert waits[:3] == pytest.approx([0, 0, 0], abs=0.02)
    # The fourth waits for a tenth of a second less what passed since the first: a slow machine refills too.
    assert 0.1 - elapsed - 0.01 <= waits[3] <= 0.1 + 0.01, (waits, elapsed)


def test_a_moved_ceiling_moves_a_pace_that_stood_at_it_and_keeps_a_learned_one():
    name = f"test:{uuid.uuid4().hex}"
    TokenBucket(name, per_minute=60, capacity=3).take()  # made under a ceiling of 60 a minute
    raised = TokenBucket(name, per_minute=600, capacity=3).state()
    assert (raised.per_minute, raised.cap_per_minute) == (pytest.approx(600), pytest.approx(600))

    learned = adaptive(600)
    learned.lower(factor=0.5, floor_per_minute=1, pause_seconds=0, recover_to=0.8)  # 300, cap 480
    higher = TokenBucket(learned.key.removeprefix(KEY_PREFIX), per_minute=1200, capacity=3).state()
    assert (higher.per_minute, higher.cap_per_minute) == (pytest.approx(300), pytest.approx(480))
    lower = TokenBucket(learned.key.removeprefix(KEY_PREFIX), per_minute=120, capacity=3).state()
    assert (lower.per_minute, lower.cap_per_minute) == (pytest.approx(120), pytest.approx(120)), "never above it"

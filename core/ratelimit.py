"""A token bucket in Redis, shared by every worker process and by consecutive runs, whose pace can adapt.

One Lua script does the arithmetic atomically with Redis's own clock, so processes on
different machines agree on time. A taker *reserves* its token: the bucket may go into
debt, and the answer is how long to wait until the reserved token is due. Takers are thus
served in order and spaced exactly 1/rate apart, without polling.

The pace is AIMD, as TCP's: `lower` (Telegram said "too fast") multiplies the rate down and remembers
just under the rate that drew it as the cap; every `raise_every` clean takes add `raise_step`, up to that
cap, never above the configured ceiling. A `halt` hands out nothing until a moment (an account resting),
and every taker in every process learns it at its next token.
"""

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import cache

import redis
from django.conf import settings

logger = logging.getLogger(__name__)

KEY_PREFIX = "stashcast:ratelimit:"

# KEYS[1] the bucket. ARGV: capacity, ceiling (tokens/s), raise_every, raise_step (tokens/s), memory (s),
# start rate (tokens/s, when the bucket has none), start halt (epoch, when the bucket has none), start spent (epoch
# the last token handed out was due, when the bucket has none; 0: none known), mode, then the mode's arguments.
# State: `tokens` (negative = reserved ahead) as of time `at` (in the future while paused), `rate`, `cap`
# (how high clean sending may raise it), `clean` (takes since the last change), `halt` (epoch, or 0),
# `ceiling` (the one it was last used under).
# Mode "take" takes ARGV[10] tokens (default 1: a byte budget takes a part's bytes at once); "refund" gives back
# ARGV[10] tokens taken and never used.
# Answer: {"ok" | "halt", wait, rate, changed (1 when this call changed the rate), halt, cap, rate before,
# due (epoch the token taken is due; 0 when none was)}.
_SCRIPT = """
local capacity, ceiling = tonumber(ARGV[1]), tonumber(ARGV[2])
local raise_every, raise_step = tonumber(ARGV[3]), tonumber(ARGV[4])
local memory, start, start_halt = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local start_spent, mode = tonumber(ARGV[8]), ARGV[9]
local clock = redis.call("TIME")
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local state = redis.call("HMGET", KEYS[1], "tokens", "at", "rate", "cap", "clean", "halt", "ceiling")
local stored_rate, stored_cap = tonumber(state[3]) or start, tonumber(state[4]) or ceiling
-- The operator moved the ceiling: a pace (and a cap) that stood at the old one follows it; a learned one stays.
local was = tonumber(state[7]) or ceiling
if stored_rate >= was then stored_rate = ceiling end
if stored_cap >= was then stored_cap = ceiling end
local rate = math.min(ceiling, stored_rate)
local before = rate
local cap = math.min(ceiling, stored_cap)
local clean = tonumber(state[5]) or 0
local halt = tonumber(state[6]) or start_halt
local tokens, at = tonumber(state[1]), tonumber(state[2])
if tokens == nil then
  -- Redis does not hold the bucket (never did, restarted, flushed, evicted): empty when its last token was due,
  -- refilled since. Never full at once: the tokens reserved before it was forgotten still go out.
  if start_spent > now then
    tokens, at = 0, start_spent
  else
    tokens, at = math.min(capacity, (now - start_spent) * rate), now
  end
end
if now > at then
  tokens = math.min(capacity, tokens + (now - at) * rate)
  at = now
end
local status, wait, changed, due = "ok", 0, 0, 0
if mode == "take" then
  if halt > now then
    status = "halt"
  else
    tokens = tokens - (tonumber(ARGV[10]) or 1)
    wait = (at - now) + math.max(0, -tokens) / rate
    due = now + wait
    clean = clean + 1
    if raise_every > 0 and clean >= raise_every and rate < cap then
      rate = math.min(cap, rate + raise_step)
      clean, changed = 0, 1
    end
  end
elseif mode == "state" then
  wait = math.max(0, at - now)  -- the pause (a FloodWait) still running; the tokens reserved ahead are not in it
elseif mode == "pause" then
  at = math.max(at, now + tonumber(ARGV[10]))
  tokens = math.min(tokens, 0)
elseif mode == "lower" then
  -- ARGV: factor, floor (tokens/s), pause seconds, share of the drawing rate clean sending may climb back to.
  -- Answers to sends reserved before the last lowering arrive while its pause runs: they lower nothing more.
  local paused = at > now
  if not paused then
    local floor = tonumber(ARGV[11])
    cap = math.max(floor, rate * tonumber(ARGV[13]))
    rate = math.max(floor, rate * tonumber(ARGV[10]))
    clean, changed = 0, 1
  end
  at = math.max(at, now + tonumber(ARGV[12]))
  tokens = math.min(tokens, 0)
elseif mode == "halt" then
  halt = tonumber(ARGV[10])
elseif mode == "refund" then
  tokens = math.min(capacity, tokens + tonumber(ARGV[10]))
end
redis.call("HSET", KEYS[1], "tokens", tostring(tokens), "at", tostring(at), "rate", tostring(rate),
  "cap", tostring(cap), "clean", tostring(clean), "halt", tostring(halt), "ceiling", tostring(ceiling))
-- the pace is remembered for `memory` after the last use; a missing bucket starts from what the caller knows
redis.call("PEXPIRE", KEYS[1], math.ceil((memory + math.max(0, halt - now, at - now)) * 1000))
return {status, tostring(wait), tostring(rate), changed, tostring(halt), tostring(cap), tostring(before),
  tostring(due)}
"""


@cache
def _script(url: str):
    return redis.Redis.from_url(url).register_script(_SCRIPT)


class BucketUnavailable(Exception):
    """Redis did not answer for REDIS_PATIENCE_SECONDS: nothing can be paced, so nothing is sent."""


class BucketTooLate(Exception):
    """The token is due later than the taker can use it (a FloodWait holds the account past a run's window). The
    token stays taken: undoing it would let a later taker jump the queue, and one token is a second or two."""

    def __init__(self, wait: float):
        super().__init__(f"The next token is due in {wait:.0f} s.")
        self.wait = wait


class BucketHalted(Exception):
    """Nothing is handed out until `until` (epoch seconds)."""

    def __init__(self, until: float):
        super().__init__(f"The bucket is halted until {until:.0f}.")
        self.until = until


@dataclass(frozen=True)
class Pace:
    """A bucket's state after a call: its rate now, and whether that call changed it."""

    wait: float
    per_minute: float
    changed: bool
    halted_until: float  # epoch seconds, 0 when not halted
    cap_per_minute: float
    before_per_minute: float  # the rate when the call began
    due: float = 0  # epoch seconds (Redis's clock) the token taken is due; 0 when none was taken


class TokenBucket:
    """`capacity` tokens at most, refilled at `per_minute` / 60 a second (the ceiling of an adaptive pace).

    With `raise_every`, a lowered pace climbs back by `raise_step_per_minute` every that many clean takes.
    `start_per_minute` is the pace of a bucket Redis does not hold (yet, or any more), `start_halt` its halt and
    `start_spent` when its last token was due (it starts empty then, refilled since; never full at once): what the
    database remembers, so a flushed or restarted Redis forgets none of them (`remember`).
    """

    def __init__(
        self,
        name: str,
        *,
        per_minute: float,
        capacity: int,
        raise_every: int = 0,
        raise_step_per_minute: float = 0,
        memory_seconds: float = 86400,
        start_per_minute: float | None = None,
        start_halt: float = 0,
        start_spent: float = 0,
    ):
        if per_minute <= 0:
            raise ValueError(f"A rate must be above 0 per minute, got {per_minute}.")
        if capacity < 1:
            raise ValueError(f"A bucket holds at least 1 token, got {capacity}.")
        self.key = KEY_PREFIX + name
        self.capacity = capacity
        self.rate = per_minute / 60
        self.raise_every = raise_every
        self.raise_step = raise_step_per_minute / 60
        self.memory_seconds = memory_seconds
        self.remember(start_per_minute=start_per_minute, halt=start_halt, spent=start_spent)

    def remember(self, *, start_per_minute: float | None, halt: float, spent: float = 0) -> None:
        """The pace (None: the ceiling), halt and last spend the database keeps: where the bucket starts again if
        Redis has forgotten it."""
        start = self.rate * 60 if start_per_minute is None else start_per_minute
        self.start = min(self.rate, max(start / 60, 1e-6))
        self.start_halt = halt
        self.start_spent = spent

    def _call(self, mode: str, *args: float) -> Pace:
        fixed = [
            self.capacity,
            self.rate,
            self.raise_every,
            self.raise_step,
            self.memory_seconds,
            self.start,
            self.start_halt,
            self.start_spent,
        ]
        status, wait, rate, changed, halt, cap, before, due = _script(settings.REDIS_URL)(
            keys=[self.key], args=[*fixed, mode, *args]
        )
        pace = Pace(
            float(wait), float(rate) * 60, bool(changed), float(halt), float(cap) * 60, float(before) * 60, float(due)
        )
        if status == b"halt":
            raise BucketHalted(pace.halted_until)
        return pace

    def take(self, tokens: float = 1) -> Pace:
        """Take `tokens` (one message; a part's bytes); `wait` is the seconds to wait before using them (0 when
        they were there).

        Raises BucketHalted, taking nothing, while the bucket is halted."""
        return self._call("take", tokens)

    def reserve(self) -> float:
        return self.take().wait

    def refund(self, tokens: float = 1) -> None:
        """Give back `tokens` taken and never used (their sender stopped before their turn): the next sender has
        them. A pause or a halt still holds."""
        self._call("refund", tokens)

    def pause(self, seconds: float) -> None:
        """Nothing is handed out for `seconds` (Telegram's FloodWait), then the refill starts from empty."""
        self._call("pause", seconds)

    def lower(self, *, factor: float, floor_per_minute: float, pause_seconds: float, recover_to: float) -> Pace:
        """Telegram said "too fast": the pace times `factor` (not below the floor), clean sending may climb back
        to `recover_to` of the pace that drew it, and nothing is handed out for `pause_seconds`. `changed` is
        False when a lowering's pause was still running (the answer was to a send reserved before it)."""
        return self._call("lower", factor, floor_per_minute / 60, pause_seconds, recover_to)

    def halt(self, *, until: float) -> Pace:
        """Hand out nothing until `until` (epoch seconds); 0 lifts the halt."""
        return self._call("halt", until)

    def state(self) -> Pace:
        """The pace now, changing nothing (a halted bucket answers with its halt, not BucketHalted); `wait` is
        what is left of a pause (a FloodWait)."""
        return self._call("state")

    async def acquire(
        self,
        *,
        wait_at_most: float | None = None,
        taken: Callable[[Pace], Awaitable[None]] | None = None,
        tokens: float = 1,
    ) -> Pace:
        """Take one token, waiting until it is due; `taken` hears of it before the wait (to record the spend while
        the token is still ahead). Redis not answering (a restart, a blip) is waited out for up to
        REDIS_PATIENCE_SECONDS, then BucketUnavailable: a send is never made unpaced. A token due after
        `wait_at_most` seconds is not waited for: BucketTooLate."""
        deadline = time.monotonic() + settings.REDIS_PATIENCE_SECONDS
        while True:
            try:
                pace = await asyncio.to_thread(self.take, tokens)
                break
            except (redis.ConnectionError, redis.TimeoutError) as exc:
                if time.monotonic() >= deadline:
                    logger.error("Redis did not answer for %s s: %s", settings.REDIS_PATIENCE_SECONDS, exc)
                    raise BucketUnavailable(
                        f"Redis (the shared send budget) did not answer for {settings.REDIS_PATIENCE_SECONDS} s."
                    ) from exc
                await asyncio.sleep(1)
        if wait_at_most is not None and pace.wait > wait_at_most:
            raise BucketTooLate(pace.wait)
        due = time.monotonic() + pace.wait
        if taken is not None:
            await taken(pace)
        # Until the token's due time, not for `wait` after hearing of it: the spacing stays the bucket's.
        try:
            if (left := due - time.monotonic()) > 0:
                await asyncio.sleep(left)
        except asyncio.CancelledError:
            # Stopped before its turn (Pause, Cancel, a lost lock): the token was not used; the next sender has it.
            try:
                await asyncio.to_thread(self.refund, tokens)
            except redis.RedisError as exc:
                logger.warning("A token not used could not be given back: %s", exc)
            raise
        return pace


def buckets_answer() -> bool:
    """Whether Redis (where every send budget lives) answers now: what a run paused by its outage waits for."""
    try:
        return bool(redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2).ping())
    except redis.RedisError:
        return False


def account_send_bucket(
    *, account_id: int, start_per_minute: float | None = None, start_halt: float = 0, start_spent: float = 0
) -> TokenBucket:
    """The send budget of one Telegram account: every message of every run and worker takes from it.

    Its ceiling is REMINDER_MAX_SEND_PER_MINUTE; the pace under it adapts (REMINDER_PACE_*)."""
    ceiling = settings.REMINDER_MAX_SEND_PER_MINUTE
    return TokenBucket(
        f"send:account:{account_id}",
        per_minute=ceiling,
        capacity=settings.REMINDER_SEND_BURST,
        raise_every=settings.REMINDER_PACE_RAISE_EVERY,
        raise_step_per_minute=ceiling * settings.REMINDER_PACE_RAISE_PERCENT / 100,
        memory_seconds=settings.REMINDER_PACE_MEMORY_HOURS * 3600,
        start_per_minute=start_per_minute,
        start_halt=start_halt,
        start_spent=start_spent,
    )

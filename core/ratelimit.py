"""A token bucket in Redis, shared by every worker process and by consecutive runs.

One Lua script does the arithmetic atomically with Redis's own clock, so processes on
different machines agree on time. A taker *reserves* its token: the bucket may go into
debt, and the answer is how long to wait until the reserved token is due. Takers are thus
served in order and spaced exactly 1/rate apart, without polling.
"""

import asyncio
from functools import cache

import redis
from django.conf import settings

KEY_PREFIX = "stashcast:ratelimit:"

# KEYS[1] the bucket; ARGV capacity, tokens per second, "take" or "pause", pause seconds.
# State: `tokens` (negative = reserved ahead) as of time `at` (in the future while paused).
_SCRIPT = """
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local clock = redis.call("TIME")
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local state = redis.call("HMGET", KEYS[1], "tokens", "at")
local tokens = tonumber(state[1]) or capacity
local at = tonumber(state[2]) or now
if now > at then
  tokens = math.min(capacity, tokens + (now - at) * rate)
  at = now
end
local wait = 0
if ARGV[3] == "take" then
  tokens = tokens - 1
  wait = (at - now) + math.max(0, -tokens) / rate
else
  at = math.max(at, now + tonumber(ARGV[4]))
  tokens = math.min(tokens, 0)
end
redis.call("HSET", KEYS[1], "tokens", tostring(tokens), "at", tostring(at))
-- a missing bucket is a full one, so it may go once it would have refilled
redis.call("PEXPIRE", KEYS[1], math.ceil(((at - now) + (capacity - tokens) / rate) * 1000) + 1000)
return tostring(wait)
"""


@cache
def _script(url: str):
    return redis.Redis.from_url(url).register_script(_SCRIPT)


class TokenBucket:
    """`capacity` tokens at most, refilled at `per_minute` / 60 a second."""

    def __init__(self, name: str, *, per_minute: float, capacity: int):
        if per_minute <= 0:
            raise ValueError(f"A rate must be above 0 per minute, got {per_minute}.")
        if capacity < 1:
            raise ValueError(f"A bucket holds at least 1 token, got {capacity}.")
        self.key = KEY_PREFIX + name
        self.capacity = capacity
        self.rate = per_minute / 60

    def _call(self, mode: str, seconds: float = 0) -> float:
        return float(_script(settings.REDIS_URL)(keys=[self.key], args=[self.capacity, self.rate, mode, seconds]))

    def reserve(self) -> float:
        """Take one token; returns the seconds to wait before using it (0 when one was there)."""
        return self._call("take")

    def pause(self, seconds: float) -> None:
        """Nothing is handed out for `seconds` (Telegram's FloodWait), then the refill starts from empty."""
        self._call("pause", seconds)

    async def acquire(self) -> float:
        """Take one token, waiting until it is due; returns how long it waited."""
        wait = await asyncio.to_thread(self.reserve)
        if wait > 0:
            await asyncio.sleep(wait)
        return wait


def account_send_bucket(*, account_id: int) -> TokenBucket:
    """The send budget of one Telegram account: every message of every run and worker takes from it."""
    return TokenBucket(
        f"send:account:{account_id}",
        per_minute=settings.REMINDER_MAX_SEND_PER_MINUTE,
        capacity=settings.REMINDER_SEND_BURST,
    )

"""The send buckets (core.ratelimit) in tests."""

import redis
from django.conf import settings

from core.ratelimit import KEY_PREFIX


def send_buckets_flush() -> None:
    """Forget every send bucket, as a Redis restarted without its data would. Only this test process's: it has a
    Redis database of its own (config/settings/test.py)."""
    client = redis.Redis.from_url(settings.REDIS_URL)
    keys = list(client.scan_iter(f"{KEY_PREFIX}*"))
    if keys:
        client.delete(*keys)

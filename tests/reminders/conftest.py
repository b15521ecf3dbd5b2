import pytest


@pytest.fixture(autouse=True)
def paced_from_empty_buckets(fast_pace, fresh_buckets):
    """Every reminders test sends on the time-scaled budget, from empty send buckets."""

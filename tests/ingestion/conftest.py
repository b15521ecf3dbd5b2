import pytest

from accounts.models import TelegramAccount
from core.runs import run_claim
from ingestion.models import IngestionRun
from ingestion.pipeline import ingestion_run_execute

READER = "+15550000001"
READER_B = "+15550000002"
WRITER = "+15550000009"
SOURCE = 1001
DESTINATION = 9000


@pytest.fixture(autouse=True)
def files_in_tmp(storage):
    """Ingestion downloads and keeps files: each test in its own folder."""


def world(*, messages, more_chats=(), accounts=None, faults=(), limits=None, forum=False, topics=None):
    """A source channel with `messages`, a destination written by its own account."""
    accounts = accounts or [
        {"phone": READER, "first_name": "Reader A", "code": "12345"},
        {"phone": WRITER, "first_name": "Writer", "code": "12345"},
    ]
    phones = [account["phone"] for account in accounts]
    readers = [phone for phone in phones if phone != WRITER]
    source = {
        "id": SOURCE,
        "title": "Models A",
        "type": "channel",
        "forum": forum,
        "role": "source",
        "members": readers,
        "messages": messages,
    }
    if topics is not None:
        source["topics"] = topics
    data = {
        "accounts": accounts,
        "chats": [
            source,
            {
                "id": DESTINATION,
                "title": "Archive",
                "type": "channel",
                "role": "destination",
                "members": [WRITER],
                "admins": [WRITER],
                "messages": [],
            },
            *more_chats,
        ],
        "faults": list(faults),
    }
    if limits:
        data["limits"] = limits
    return data


def run_cycle(phone: str = READER) -> IngestionRun:
    account = TelegramAccount.objects.get(phone=phone)
    run = IngestionRun.objects.create(account=account, trigger="command")
    claimed = run_claim(model=IngestionRun, run_id=run.pk)
    ingestion_run_execute(run=claimed)
    claimed.refresh_from_db()
    return claimed

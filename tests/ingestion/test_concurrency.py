"""Two accounts read the same channel at the same moment, in two OS processes."""

import pytest

from ingestion.models import IngestionRun
from packages.models import Package
from tests.support.ingestion import READER, READER_B, WRITER, uploads, world
from tests.support.processes import start_program

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.processes]


def test_two_accounts_ingesting_concurrently_upload_each_archive_once(ingest_world, tmp_path):
    messages = [
        {"id": 10 + n, "document": {"name": f"set{n}.zip", "archive": [{"path": f"m{n}.stl", "size": 40_000 + n}]}}
        for n in range(8)
    ]
    accounts = [
        {"phone": READER, "first_name": "Reader A", "code": "12345"},
        {"phone": READER_B, "first_name": "Reader B", "code": "12345"},
        {"phone": WRITER, "first_name": "Writer", "code": "12345"},
    ]
    ingest_world(world(messages=messages, accounts=accounts))
    workers = [start_program(["manage.py", "ingest", "--once", "--account", phone]) for phone in (READER, READER_B)]
    for worker in workers:
        out, err = worker.communicate(timeout=180)
        assert worker.returncode == 0, err[-3000:]

    posted = [message["document"]["name"] for message in uploads()]
    assert sorted(posted) == sorted(f"set{n}.zip" for n in range(8)), "each archive exactly once"
    assert Package.objects.count() == 8
    runs = IngestionRun.objects.all()
    assert len(runs) == 2 and all(run.archives_found == 8 for run in runs), "both accounts saw every archive"
    assert sum(run.ingested for run in runs) == 8

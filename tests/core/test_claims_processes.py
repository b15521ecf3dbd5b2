import json
import os
import subprocess
import sys

import pytest
from django.conf import settings
from django.db import connection

from core.models import RunStatus
from tests.claimtest.models import ProbeRun

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.processes]


@pytest.mark.alone  # both processes must start while rows are left
def test_two_processes_claim_every_row_exactly_once(tmp_path):
    ProbeRun.objects.bulk_create(ProbeRun() for _ in range(1000))
    go_file = tmp_path / "go"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    workers = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.core.claim_worker", connection.settings_dict["NAME"], str(go_file)],
            cwd=settings.BASE_DIR,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    go_file.touch()
    reports = []
    for worker in workers:
        out, _ = worker.communicate(timeout=120)
        assert worker.returncode == 0
        reports.append(json.loads(out.strip().splitlines()[-1]))

    first, second = (set(report["claimed"]) for report in reports)
    assert first.isdisjoint(second), f"{len(first & second)} rows were claimed by both processes"
    assert first | second == set(ProbeRun.objects.values_list("pk", flat=True))
    assert first and second, "both processes should have claimed work (they started together)"
    assert ProbeRun.objects.exclude(status=RunStatus.RUNNING).count() == 0
    for report in reports:
        recorded = set(ProbeRun.objects.filter(worker_id=report["worker_id"]).values_list("pk", flat=True))
        assert recorded == set(report["claimed"])

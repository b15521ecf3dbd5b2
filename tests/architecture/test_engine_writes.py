"""Engines supply only their work: every row they change is written by a service of their app
(docs/architecture.md, "The run engine"). core/engine.py is left out: its heartbeat's own SQL is the engine.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENGINES = [
    "reminders/fanout/loop.py",
    "reminders/fanout/retries.py",
    "reminders/fanout/replace.py",
    "reminders/fanout/stops.py",
    "reminders/fanout/parts.py",
    "packages/sending.py",
    "ingestion/pipeline.py",
    "ingestion/taking.py",
    "ingestion/scan_stage.py",
    "ingestion/fetching.py",
    "ingestion/uploading.py",
    "ingestion/previewing.py",
]
# Always a write on a model or a queryset.
WRITES = {"save", "delete", "bulk_create", "bulk_update", "get_or_create", "update_or_create"}
# A write when called on a manager or a queryset (a dict's or a hash's update is not).
QUERYSET_WRITES = {"create", "update"}
QUERYSET_CALLS = {"filter", "exclude", "all", "select_for_update", "select_related", "only", "defer", "distinct"}


def _on_queryset(node: ast.expr) -> bool:
    """`Model.objects...`, `something.filter(...)` and the like, however long the chain."""
    while True:
        if isinstance(node, ast.Attribute):
            if node.attr == "objects":
                return True
            node = node.value
        elif isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute) and node.func.attr in QUERYSET_CALLS:
                return True
            node = node.func
        else:
            return False


def engine_writes(source: str) -> list[str]:
    """Each ORM write in the source, as `line: call`."""
    found = []
    for node in sorted(ast.walk(ast.parse(source)), key=lambda node: getattr(node, "lineno", 0)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        name = node.func.attr
        if name in WRITES or (name in QUERYSET_WRITES and _on_queryset(node.func.value)):
            found.append(f"{node.lineno}: {ast.unparse(node.func)}(...)")
    return found


@pytest.mark.parametrize("path", ENGINES)
def test_engine_writes_only_through_services(path):
    writes = engine_writes((ROOT / path).read_text())
    assert not writes, f"{path} writes rows itself; move each write into a service of its app: {writes}"


def test_the_check_sees_every_kind_of_write():
    source = """
Run.objects.filter(pk=1).update(status="x")
Part.objects.create(name="a")
Part.objects.bulk_create(parts)
send.save(update_fields=["parts_total"])
send.parts.filter(sent_at__isnull=True).update(error="")
run.targets.all().delete()
fields.update(requests_sent=1)
volume_hash.update(block)
"""
    assert [write.split(":")[0] for write in engine_writes(source)] == ["2", "3", "4", "5", "6", "7"]

"""docs/decisions/: one record per decision in adr-tools form, each listed in the index, every link between
records and every reference to a record from the code and docs pointing at a file that exists."""

import re
from pathlib import Path

from django.conf import settings

DECISIONS = Path(settings.BASE_DIR) / "docs" / "decisions"
RECORD = re.compile(r"^\d{4}-[a-z0-9-]+\.md$")


def records() -> list[Path]:
    return sorted(path for path in DECISIONS.iterdir() if RECORD.match(path.name))


def test_each_record_has_its_number_date_status_and_three_parts():
    assert records(), "docs/decisions/ has no records"
    for number, path in enumerate(records(), 1):
        text = path.read_text()
        assert path.name.startswith(f"{number:04d}-"), f"{path.name}: numbers go 0001, 0002, … without gaps"
        assert re.match(rf"# {number}\. \S", text), path.name
        assert re.search(r"^Date: \d{4}-\d{2}-\d{2}$", text, re.M), path.name
        headings = re.findall(r"^## (.+)$", text, re.M)
        assert headings == ["Status", "Context", "Decision", "Consequences"], path.name


def test_the_index_lists_every_record_with_its_status_and_date():
    index = (DECISIONS / "README.md").read_text()
    for path in records():
        text = path.read_text()
        status = text.split("## Status\n\n", 1)[1].split("\n", 1)[0]
        date = re.search(r"^Date: (\S+)$", text, re.M).group(1)
        assert f"]({path.name}) | {status} | {date} |" in index, f"{path.name} is missing from the index"


def test_links_between_records_resolve():
    for path in [*records(), DECISIONS / "README.md"]:
        for target in re.findall(r"\]\(([^)#]+\.md)\)", path.read_text()):
            if not target.startswith("http"):
                assert (DECISIONS / target).exists(), f"{path.name} links to {target}, which does not exist"


def test_code_and_docs_name_records_that_exist():
    base = Path(settings.BASE_DIR)
    sources = [base / "README.md", base / "CONTRIBUTING.md", *base.glob("docs/*.md")]
    sources += [
        p
        for app in ("config", "core", "ingestion", "packages", "reminders", "accounts", "operations", "telegram")
        for p in (base / app).rglob("*.py")
    ]
    for path in sources:
        if not path.exists():
            continue
        text = path.read_text()
        assert "docs/decisions.md" not in text, f"{path} still names docs/decisions.md"
        for number in re.findall(r"decisions/(\d{4})-", text):
            assert list(DECISIONS.glob(f"{number}-*.md")), f"{path} names decision {number}, which does not exist"

"""No source file is over 500 lines: a longer one has more than one job, and is split by job (docs/architecture.md).
Tests, migrations and bench scripts are not held to it. Files git does not ignore count, committed or not.
"""

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 500
NOT_SOURCE = {"tests", "migrations", "bench"}


def _source_files() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return sorted(
        name for name in set(listed) if not NOT_SOURCE & set(Path(name).parts[:-1]) and (ROOT / name).is_file()
    )


def _lines(name: str) -> int:
    return len((ROOT / name).read_text().splitlines())


SOURCES = _source_files()


def test_the_walk_finds_the_source():
    assert len(SOURCES) > 100
    assert {"core/access.py", "packages/api/packages.py"} <= set(SOURCES)
    assert not [name for name in SOURCES if name.startswith(("tests/", "bench/")) or "/migrations/" in name]


def test_no_source_file_is_over_the_limit():
    over = [f"{name}: {_lines(name)} lines" for name in SOURCES if _lines(name) > LIMIT]
    assert not over, f"Over {LIMIT} lines; split by job:\n" + "\n".join(over)

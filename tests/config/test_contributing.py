"""CONTRIBUTING.md and the README send a newcomer to files: each one it names exists."""

import re
from pathlib import Path

import pytest
from django.conf import settings

BASE = Path(settings.BASE_DIR)
ROOTS = "tests|telegram|core|config|packages|reminders|ingestion|accounts|operations|templates|static|docs|bench"


@pytest.mark.parametrize("guide", ["CONTRIBUTING.md", "README.md", "docs/development.md", "docs/api.md"])
def test_every_file_a_guide_names_exists(guide):
    text = (BASE / guide).read_text()
    named = set(re.findall(rf"`((?:{ROOTS})/[^`\s<>*]+)`", text))
    named |= {link for link in re.findall(r"\]\(([^)#:]+)\)", text)}
    folder = (BASE / guide).parent
    missing = [name for name in sorted(named) if not (BASE / name).exists() and not (folder / name).exists()]
    assert not missing, f"{guide} names files that do not exist: {missing}"

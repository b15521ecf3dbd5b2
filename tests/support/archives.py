"""Archives made by the real tools (Info-ZIP `zip`, `7z`), as people make them."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

PASSWORD = "S3cret-pass"
RAR_FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "rar"


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"`{name}` is needed for these tests: apt-get install zip p7zip-full (as .ci/run does)")
    return path


def run(*args: str, cwd: Path) -> None:
    subprocess.run(args, cwd=cwd, check=True, capture_output=True, env={**os.environ, "LC_ALL": "C.UTF-8"})


def files(folder: Path, names: list[str], size: int = 2000) -> list[str]:
    for number, name in enumerate(names):
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(os.urandom(size) if number % 2 else bytes([number % 256]) * size)
    return names

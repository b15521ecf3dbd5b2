"""What a listing child costs to start: a new Python for each listing against a child forked from the fork server.

Both run the same child code (`packages.archives.child.child_run`) on the same small archives, one after the
other, in one run: a zip, a 7z (real tools), and a zip holding an STL drawn as the model's preview. Prints the
wall time of one listing each way and the ratio. No database needed.

    .venv/bin/python -m bench.listing_children [--rounds 30]
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trimesh

from packages.archives import read_archive
from packages.archives.child import LISTING_MEMORY_BYTES
from packages.archives.entries import MAX_DECLARED_BYTES, MAX_ENTRIES
from packages.detection import SEVEN_ZIP, ZIP
from tests.support.archives import run, tool

ROOT = Path(__file__).resolve().parent.parent
# A new Python for the request, as every listing was started before the fork server.
NEW_PYTHON = (
    "import json, sys; from packages.archives.child import child_run; "
    "sys.stdout.write(json.dumps(child_run(json.loads(sys.stdin.read()))))"
)


def archives(folder: Path) -> list[tuple[str, str, Path, bool]]:
    (folder / "kit").mkdir()
    for number in range(20):
        (folder / "kit" / f"part-{number}.stl").write_bytes(bytes(range(256)) * 8)
    run(tool("zip"), "-qr", "kit.zip", "kit", cwd=folder)
    run(tool("7z"), "a", "-bd", "kit.7z", "kit", cwd=folder)
    (folder / "model").mkdir()
    (folder / "model" / "ball.stl").write_bytes(trimesh.creation.icosphere(subdivisions=3).export(file_type="stl"))
    run(tool("zip"), "-qr", "model.zip", "model", cwd=folder)
    return [
        ("zip, 20 files", ZIP, folder / "kit.zip", False),
        ("7z, 20 files", SEVEN_ZIP, folder / "kit.7z", False),
        ("zip with a model, drawn", ZIP, folder / "model.zip", True),
    ]


def new_python(archive_type: str, path: Path, model_preview: bool) -> None:
    request = {
        "type": archive_type,
        "volumes": [{"path": str(path)}],
        "max_entries": MAX_ENTRIES,
        "max_declared_bytes": MAX_DECLARED_BYTES,
        "memory_bytes": LISTING_MEMORY_BYTES,
        "thumbnails": 0,
        "range_bytes": 0,
        "passwords": [],
        "model_preview": model_preview,
    }
    done = subprocess.run(
        [sys.executable, "-c", NEW_PYTHON],
        input=json.dumps(request).encode(),
        capture_output=True,
        check=True,
        env={"OPENBLAS_NUM_THREADS": "1", "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )
    assert json.loads(done.stdout)["entries"]


def forked(archive_type: str, path: Path, model_preview: bool) -> None:
    assert read_archive(archive_type, [path], model_preview=model_preview).entries


def per_listing_ms(how, archive_type: str, path: Path, model_preview: bool, rounds: int) -> float:
    started = time.perf_counter()
    for _ in range(rounds):
        how(archive_type, path, model_preview)
    return (time.perf_counter() - started) / rounds * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="stashcast-bench-") as folder:
        cases = archives(Path(folder))
        started = time.perf_counter()
        forked(ZIP, cases[0][2], False)
        print(f"fork server's start (first listing): {(time.perf_counter() - started) * 1000:.0f} ms")
        print("| archive | a new Python | forked | ratio |")
        print("| --- | --- | --- | --- |")
        for label, archive_type, path, model_preview in cases:
            before = per_listing_ms(new_python, archive_type, path, model_preview, args.rounds)
            after = per_listing_ms(forked, archive_type, path, model_preview, args.rounds)
            print(f"| {label} | {before:.1f} ms | {after:.1f} ms | {before / after:.1f}× |")


if __name__ == "__main__":
    main()

"""Hostile archive listings: wall time and the listing child's peak memory.

Prints one line per archive: a 1 GiB zip bomb, 100,000 entries (zip, and 7z with --with-7z), a zip
that declares 10 million entries, a 7z volume set whose last volume is cut. No database needed.

    .venv/bin/python -m bench.hostile_listing [--with-7z]
"""

import argparse
import tempfile
import time
from pathlib import Path

import py7zr

from packages.archives import ListingError, read_archive
from packages.detection import SEVEN_ZIP, ZIP
from tests.support import hostile


def measure(label: str, archive_type: str, volumes: list[Path]) -> None:
    started = time.monotonic()
    memory = "—"
    try:
        listing = read_archive(archive_type, volumes)
        outcome, memory = f"{len(listing.entries)} entries", f"{listing.peak_memory_bytes / 1024**2:.0f} MiB"
    except ListingError as exc:
        outcome = f"unavailable: {str(exc)[:70]}"
    elapsed = time.monotonic() - started
    size = sum(volume.stat().st_size for volume in volumes)
    print(f"| {label} | {size / 1024**2:.1f} MiB | {elapsed:.2f} s | {memory} | {outcome} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--with-7z", action="store_true", help="also build and list a 7z of 100,000 entries (~10 s)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="stashcast-bench-") as folder:
        root = Path(folder)
        print("| archive | on disk | listing time | child peak RSS | outcome |")
        print("| --- | --- | --- | --- | --- |")
        measure("zip bomb, 1 GiB of zeros", ZIP, [hostile.zip_bomb(root / "bomb.zip")])
        measure("zip, 100,000 entries", ZIP, [hostile.many_entries_zip(root / "many.zip", 100_000)])
        count = hostile.raw_zip(root / "count.zip", [hostile.RawEntry(b"a")], declared_count=10_000_000)
        measure("zip declaring 10,000,000 entries", ZIP, [count])
        measure("7z volumes, last one cut", SEVEN_ZIP, hostile.truncated_7z_volumes(root))
        if args.with_7z:
            path = root / "many.7z"
            with py7zr.SevenZipFile(path, "w") as archive:
                for number in range(100_000):
                    archive.writestr(b"", f"dir{number % 100}/part{number}.stl")
            measure("7z, 100,000 entries", SEVEN_ZIP, [path])


if __name__ == "__main__":
    main()

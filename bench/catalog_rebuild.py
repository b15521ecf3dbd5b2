"""The catalog rebuilt with its listings: a destination channel holding packages as the pipeline uploads them
(each document captioned with its catalog line) — zip archives with many files, 7z archives (some split into
volumes by 7z itself), single RAR volumes and RAR sets (tests/fixtures/rar), models — is rebuilt from nothing
by `catalog_rebuild_from_destination`. Each package's listing is compared with the one ingestion makes of the
same files (`package_listing_read` on the local copies); bytes read from Telegram per package are printed,
with their share of the package's size.

    .venv/bin/python -m bench.catalog_rebuild [--packages 40] [--max-mib 64] [--big 0] [--big-mib 1900]

`--big N` makes the first N packages `--big-mib` each (a split 7z among them in volumes of 1,000 MiB), so the
share read is seen at the sizes Telegram carries.
"""

import argparse
import hashlib
import os
import random
import shutil
import subprocess
import time
import zipfile
from pathlib import Path

from bench.harness import bench_django

WRITER = "+15550000009"
DESTINATION = 9000
SOURCE = 1001
RAR_FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "rar"
RAR_SINGLES = ["rar5-subdirs.rar", "rar3-subdirs.rar", "unicode.rar", "rar5-solid.rar"]
RAR_SETS = [["rar5-vols.part1.rar", "rar5-vols.part2.rar", "rar5-vols.part3.rar"]]


def _files(folder: Path, rng: random.Random, size: int) -> None:
    """A model kit: many parts of random bytes adding up to about `size`."""
    count = rng.randrange(20, 400)
    for index in range(count):
        path = folder / f"kit/part_{index:03d}_{rng.randrange(10**6)}.stl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(os.urandom(max(1, size // count)))


def _build(work: Path, number: int, rng: random.Random, max_bytes: int, big: int) -> tuple[str, list[Path]]:
    """(archive type, volumes) of package `number`: about `big` bytes when given, else 8 MiB to `max_bytes`."""
    kind = ["zip", "7z", "7z-split", "zip", "model"][number % 5]
    size = big or rng.randrange(8 * 1024**2, max_bytes)
    source = work / f"src-{number}"
    out = work / f"out-{number}"
    out.mkdir()
    if kind == "model":
        path = out / f"statue-{number}.stl"
        path.write_bytes(os.urandom(size))
        return "model", [path]
    source.mkdir()
    _files(source, rng, size)
    if kind == "zip":
        path = out / f"kit-{number}.zip"
        with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
            for file in sorted(source.rglob("*.stl")):
                archive.write(file, file.relative_to(source))
        volumes = [path]
    else:
        volume = [f"-v{1000 if big else 16}m"] if kind == "7z-split" else []
        subprocess.run(
            [shutil.which("7z"), "a", "-mx0", *volume, str(out / f"kit-{number}.7z"), "kit"],
            cwd=source,
            check=True,
            capture_output=True,
        )
        volumes = sorted(out.iterdir())
    shutil.rmtree(source)
    return ("zip" if kind == "zip" else "7z"), volumes


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--packages", type=int, default=40, help="built archives, besides the RAR fixtures")
    parser.add_argument("--max-mib", type=int, default=64)
    parser.add_argument("--big", type=int, default=0, help="how many of the built packages are --big-mib each")
    parser.add_argument("--big-mib", type=int, default=1900)
    args = parser.parse_args()
    work = bench_django("catalog_rebuild")

    from ingestion.services import catalog_rebuild_from_destination
    from operations.sandbox import sandbox_authorize
    from packages.catalog import catalog_line
    from packages.models import Package
    from packages.services import package_listing_read
    from telegram.sandbox.loader import world_load
    from telegram.sandbox.world import World

    world_load(
        Path(os.environ["SANDBOX_PATH"]),
        {
            "limits": {"upload_max_bytes": 2 * 1024**3},
            "accounts": [{"phone": WRITER, "first_name": "Writer"}],
            "chats": [
                {"id": DESTINATION, "title": "Archive", "type": "channel", "role": "destination", "admins": [WRITER]}
            ],
        },
    )
    sandbox_authorize()
    sandbox = World(os.environ["SANDBOX_PATH"])

    rng = random.Random(25)
    built = [
        _build(work, number, rng, args.max_mib * 1024**2, args.big_mib * 1024**2 if number < args.big else 0)
        for number in range(args.packages)
    ]
    built += [("rar", [RAR_FIXTURES / name]) for name in RAR_SINGLES]
    built += [("rar", [RAR_FIXTURES / name for name in names]) for names in RAR_SETS]

    expected = {}
    for number, (archive_type, volumes) in enumerate(built):
        digests = [hashlib.sha256(path.read_bytes()).hexdigest() for path in volumes]
        content_hash = digests[0] if len(digests) == 1 else hashlib.sha256("\n".join(digests).encode()).hexdigest()
        listing = package_listing_read(archive_type=archive_type, volume_paths=volumes)
        expected[content_hash] = (
            volumes[0].name,
            sum(path.stat().st_size for path in volumes),
            sorted((entry.path, entry.size, entry.crc32) for entry in listing.entries),
        )
        for index, path in enumerate(volumes):
            line = catalog_line(
                content_hash=content_hash,
                part=index + 1,
                parts=len(volumes),
                source_chat_id=SOURCE,
                source_message_id=100 * (number + 1) + index,
            )
            sandbox.message_post(DESTINATION, text=line, document={"name": path.name, "file": str(path)})

    sandbox.stats_reset()
    reads = {}

    def progress(file_name, read, done, total):
        reads[file_name] = read

    started = time.monotonic()
    result = catalog_rebuild_from_destination(on_progress=progress)
    elapsed = time.monotonic() - started
    calls = sandbox.stats()["calls"][WRITER]

    print(result.summary())
    same, shares = 0, []
    print(f"\n{'package':<28} {'type':<5} {'size':>14} {'bytes read':>12} {'share':>8}  how      listing")
    for package in Package.objects.order_by("archive_type", "file_size"):
        name, size, listing = expected[package.content_hash]
        files = sorted(package.files.values_list("path", "size", "crc32"))
        same += files == listing
        read = reads[package.file_name]
        share = 100 * read.bytes_read / size
        if not read.full_read:
            shares.append((share, size))
        how = "in full" if read.full_read else "in place"
        print(
            f"{name[:28]:<28} {package.archive_type:<5} {size:>14,} {read.bytes_read:>12,} {share:>7.3f}%  {how:<8} "
            f"{'identical' if files == listing else 'DIFFERENT'} ({len(files)} files)"
        )
    big = [share for share, size in shares if size >= 8 * 1024**2]
    print(
        f"\n{len(expected)} packages, {same} listings identical to the ingested ones; rebuild {elapsed:.1f} s, "
        f"{calls.get('upload.getFile', 0)} upload.getFile requests"
    )
    if big:
        print(f"read in place, packages of 8 MiB and more: at most {max(big):.3f} % of a package's bytes ({len(big)})")


if __name__ == "__main__":
    main()

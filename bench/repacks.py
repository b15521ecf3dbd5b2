"""Repacks recognised, on a generated world: distinct packages (some sharing a readme, a licence or half of
their parts with a sibling) and copies of some of them, repacked (another wrapper folder, other case, junk
files, a file added or dropped) and renamed. Each package's listing goes through the services that
ingestion uses after an upload (fingerprint, then "likely the same as"). Prints how many copies were found,
false matches among distinct packages, and the time to recognise one package.

    .venv/bin/python -m bench.repacks [--distinct 3000] [--copies 600]
"""

import argparse
import random
import statistics
import time

from bench.harness import bench_django


def _listing(rng: random.Random, n: int) -> list[tuple[str, int, int]]:
    folder = rng.choice(["", "stl/", "supported/", "parts/"])
    return [
        (f"{folder}part_{index:02d}_{rng.randrange(10**6)}.stl", rng.randrange(10_000, 50_000_000), rng.getrandbits(32))
        for index in range(n)
    ]


BOILERPLATE = [("readme.txt", 1_200, 0x1234ABCD), ("license.pdf", 80_000, 0x0BADF00D)]


def world(distinct: int, copies: int, seed: int = 15):
    """(name, files, original index or None) in upload order: every distinct package first, then the copies."""
    rng = random.Random(seed)
    packages = []
    for index in range(distinct):
        files = _listing(rng, rng.randrange(3, 40))
        if index % 3 == 0:
            files += BOILERPLATE  # the same readme and licence in a third of the packages
        if index % 10 == 1 and packages:
            # A sibling: half of the previous package's parts plus as many of its own (a kit's variant).
            previous = packages[-1][1]
            files = previous[: len(previous) // 2] + _listing(rng, max(1, len(previous) // 2))
        packages.append((f"model-{index}.zip", files, None))
    for number in range(copies):
        original = rng.randrange(distinct)
        files = list(packages[original][1])
        wrapper = rng.choice(["", f"Model {original} (repack)/", f"MODEL-{original}/"])
        repacked = [(wrapper + (path.upper() if rng.random() < 0.3 else path), size, crc) for path, size, crc in files]
        variant = number % 4
        if variant == 1:
            repacked += [(f"{wrapper}.DS_Store", 6_148, 0x1), (f"__MACOSX/{wrapper}._x.stl", 120, 0x2)]
        elif variant == 2 and len(files) >= 5:
            repacked.append((f"{wrapper}posted-by-me.txt", 90, rng.getrandbits(32)))
        elif variant == 3 and len(files) >= 10:
            repacked.pop(rng.randrange(len(repacked)))
        packages.append(
            (f"{rng.choice(['new', 'fixed', 'v2'])} copy {number} of model {original}.7z", repacked, original)
        )
    return packages


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--distinct", type=int, default=3000)
    parser.add_argument("--copies", type=int, default=600)
    args = parser.parse_args()
    bench_django("repacks")

    from django.utils import timezone

    from packages.models import Package, PackageFile
    from packages.repacks import ListedFile, listing_fingerprint
    from packages.services import package_repack_recognise

    generated = world(args.distinct, args.copies)
    started = timezone.now()
    ids, timings = [], []
    for number, (name, files, _) in enumerate(generated):
        package = Package.objects.create(
            content_hash=f"{number:064x}",
            file_name=name,
            file_size=sum(size for _, size, _ in files),
            archive_type="zip",
            file_count=len(files),
            metadata_status="complete",
            created_at=started + timezone.timedelta(seconds=number),
            listing_fingerprint=listing_fingerprint(ListedFile(p, s, c) for p, s, c in files),
        )
        PackageFile.objects.bulk_create(PackageFile(package=package, path=p, size=s, crc32=c) for p, s, c in files)
        began = time.perf_counter()
        package_repack_recognise(package=package)
        timings.append((time.perf_counter() - began) * 1000)
        ids.append(package.pk)

    marked = dict(Package.objects.filter(likely_same_as__isnull=False).values_list("pk", "likely_same_as"))
    index_of = {pk: index for index, pk in enumerate(ids)}
    found = wrong = false_matches = 0
    for index, (_, _, original) in enumerate(generated):
        same_as = marked.get(ids[index])
        if original is None:
            false_matches += same_as is not None
        elif same_as is None:
            continue
        # Found: the original, or an earlier copy of the same original.
        elif index_of[same_as] == original or generated[index_of[same_as]][2] == original:
            found += 1
        else:
            wrong += 1
    timings.sort()
    print(f"distinct packages {args.distinct}, copies {args.copies}, files {PackageFile.objects.count()}")
    print(f"copies found: {found} of {args.copies} ({found * 100 / args.copies:.1f} %), matched to another: {wrong}")
    print(f"false matches among distinct packages: {false_matches}")
    print(
        f"recognise one package: p50 {statistics.median(timings):.1f} ms, "
        f"p95 {timings[round(0.95 * (len(timings) - 1))]:.1f} ms"
    )


if __name__ == "__main__":
    main()

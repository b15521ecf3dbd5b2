"""Where `make test`'s time goes, and the seconds the test processes deal the long tests by.

    make test ARGS="--durations=0" | tee var/suite.log
    .venv/bin/python bench/suite_durations.py var/suite.log [--top 40]

Reads pytest's durations report (setup, call and teardown of each test), prints the slowest tests and the seconds
by folder as Markdown tables (for bench/README.md), and writes tests/durations.json: the seconds of every test of
at least a second, which tests/support/order.py reads to start the long tests first, spread evenly.
"""

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.order import DURATIONS  # noqa: E402

LINE = re.compile(r"^(\d+(?:\.\d+)?)s (setup|call|teardown)\s+(\S+)$")
KEPT_FROM_SECONDS = 1.0


def seconds_by_test(lines) -> Counter:
    """Setup, call and teardown of each test; a test id reported several times (the fuzzer's cases, one per
    operation, share theirs) is one case's share of them."""
    seconds, calls = Counter(), Counter()
    for line in lines:
        match = LINE.match(line.strip())
        if match:
            seconds[match.group(3)] += float(match.group(1))
            calls[match.group(3)] += match.group(2) == "call"
    return Counter({nodeid: spent / max(1, calls[nodeid]) for nodeid, spent in seconds.items()})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("log", type=Path, help="the output of `make test ARGS=--durations=0`")
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    seconds = seconds_by_test(args.log.read_text().splitlines())
    if not seconds:
        print(f"No durations in {args.log}: run `make test ARGS=--durations=0` into it.", file=sys.stderr)
        return 1
    total = sum(seconds.values())  # the fuzzer's cases counted once: a floor
    folders = Counter()
    for nodeid, spent in seconds.items():
        folders["/".join(nodeid.split("::")[0].split("/")[:2])] += spent
    print(f"{len(seconds)} tests, {total:,.0f} test-process seconds\n")
    print("| folder | seconds | share |\n| --- | --- | --- |")
    for folder, spent in folders.most_common():
        print(f"| `{folder}` | {spent:,.0f} | {spent / total:.0%} |")
    print(f"\n| the {args.top} slowest tests | seconds |\n| --- | --- |")
    for nodeid, spent in seconds.most_common(args.top):
        print(f"| `{nodeid.removeprefix('tests/')}` | {spent:.1f} |")
    kept = {nodeid: round(spent, 1) for nodeid, spent in sorted(seconds.items()) if spent >= KEPT_FROM_SECONDS}
    DURATIONS.write_text(json.dumps(kept, indent=0, sort_keys=True) + "\n")
    print(f"\n{len(kept)} tests of {KEPT_FROM_SECONDS:.0f} s or more written to {DURATIONS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

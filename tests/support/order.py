"""The order the test processes get the suite in: the long tests first, the longest of all first, dealt so that
each process's share of them takes about as long as the others'.

pytest-xdist's worksteal hands each process one contiguous batch of the collection at the start, then lets idle
processes take the far end of a busy one's queue. A long test is never taken once its process has started it, so
one that starts late makes the whole run wait for it, and long tests next to each other in one batch run one
after the other. Dealt out to the heads of the batches (the longest to the least loaded head), they all start
early and the short tests fill in around them.

How long a test takes comes from tests/durations.json (seconds, written by bench/suite_durations.py from a run
of the whole suite); a test it does not know is guessed from its markers.
"""

import json
from itertools import islice
from pathlib import Path

DURATIONS = Path(__file__).resolve().parents[1] / "durations.json"
# A test at least this long is dealt to the head of a batch; a shorter one waits its turn there.
LONG_SECONDS = 3.0
# Guesses for a test tests/durations.json does not name yet (a new one): what its markers say it starts.
GUESS_SECONDS = {"processes": 20.0, "browser": 8.0, "large": 8.0}


def durations_known(path: Path = DURATIONS) -> dict[str, float]:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def seconds_guessed(nodeid: str, markers: set[str], known: dict[str, float]) -> float:
    if nodeid in known:
        return known[nodeid]
    return max((GUESS_SECONDS[name] for name in markers & set(GUESS_SECONDS)), default=0.0)


def batch_sizes(count: int, processes: int) -> list[int]:
    """The sizes of the first batches worksteal hands out (xdist/scheduler/worksteal.py, check_schedule)."""
    sizes = []
    for remaining in range(processes, 0, -1):
        sizes.append((count - sum(sizes)) // remaining)
    return sizes


def long_first(items: list, processes: int, *, seconds) -> list:
    """`items` with those of `seconds(item)` ≥ LONG_SECONDS at the heads of the batches, longest first, each to the
    head with the fewest seconds so far; the others keep their order."""
    long = sorted((item for item in items if seconds(item) >= LONG_SECONDS), key=seconds, reverse=True)
    if processes < 2 or not long:
        return items
    heads = [[] for _ in range(processes)]
    loads = [0.0] * processes
    for item in long:
        least = loads.index(min(loads))
        heads[least].append(item)
        loads[least] += seconds(item)
    chosen = {id(item) for item in long}
    others = iter([item for item in items if id(item) not in chosen])
    ordered = []
    for head, size in zip(heads, batch_sizes(len(items), processes), strict=True):
        ordered += head + list(islice(others, max(0, size - len(head))))
    return ordered + list(others)

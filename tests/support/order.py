"""The order the test processes get the suite in: the long tests (marked `processes`: real workers, beats, minutes
turning) first, one share at the head of each process's first batch.

pytest-xdist's worksteal hands each process one contiguous batch of the collection at the start, then lets idle
processes take the far end of a busy one's queue. A long test is never taken once its process has started it, so
one that starts late makes the whole run wait for it, and long tests next to each other in one batch run one
after the other. Dealt out to the heads of the batches, they all start at once and the short tests fill in
around them.
"""

from itertools import islice


def batch_sizes(count: int, processes: int) -> list[int]:
    """The sizes of the first batches worksteal hands out (xdist/scheduler/worksteal.py, check_schedule)."""
    sizes = []
    for remaining in range(processes, 0, -1):
        sizes.append((count - sum(sizes)) // remaining)
    return sizes


def long_first(items: list, processes: int, *, is_long) -> list:
    """`items` with the long ones dealt in turn to the heads of the batches; the others keep their order."""
    long = [item for item in items if is_long(item)]
    if processes < 2 or not long:
        return items
    others = iter([item for item in items if not is_long(item)])
    ordered = []
    for batch, size in enumerate(batch_sizes(len(items), processes)):
        heads = long[batch::processes]
        ordered += heads + list(islice(others, max(0, size - len(heads))))
    return ordered + list(others)

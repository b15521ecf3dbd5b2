"""The suite's order on the test processes: the long tests start first, the longest first, each process's share
of them about as long as the others'."""

import json

from tests.support.order import batch_sizes, durations_known, long_first, seconds_guessed

SECONDS = {"long300": 300, "long120": 120, "long100": 100, "long90": 90, "long40": 40, "long10": 10, "long3": 3}


def seconds(item: str) -> float:
    return SECONDS.get(item, 0.5)


def heads(ordered: list[str], processes: int) -> list[list[str]]:
    starts = [0]
    for size in batch_sizes(len(ordered), processes)[:-1]:
        starts.append(starts[-1] + size)
    return [[item for item in ordered[start : start + 3] if item.startswith("long")] for start in starts]


def test_every_test_is_kept_once_and_the_short_ones_keep_their_order():
    items = [f"short{n}" for n in range(30)] + list(SECONDS)
    ordered = long_first(items, 4, seconds=seconds)
    assert sorted(ordered) == sorted(items)
    assert [item for item in ordered if item.startswith("short")] == items[:30]


def test_the_longest_go_first_each_to_the_process_with_the_fewest_seconds_so_far():
    items = [f"short{n}" for n in range(30)] + sorted(SECONDS)
    ordered = long_first(items, 4, seconds=seconds)
    assert heads(ordered, 4) == [["long300"], ["long120"], ["long100", "long10", "long3"], ["long90", "long40"]]


def test_one_process_or_no_long_tests_leaves_the_order_as_it_is():
    items = ["a", "b", "c"]
    assert long_first(items, 1, seconds=lambda item: 100) == items
    assert long_first(items, 4, seconds=lambda item: 0) == items


def test_a_test_the_durations_do_not_name_is_guessed_from_its_markers(tmp_path):
    path = tmp_path / "durations.json"
    path.write_text(json.dumps({"tests/a.py::test_known": 42.0}))
    known = durations_known(path)
    assert seconds_guessed("tests/a.py::test_known", {"processes"}, known) == 42.0
    assert seconds_guessed("tests/a.py::test_new", {"processes", "browser"}, known) == 20.0
    assert seconds_guessed("tests/a.py::test_new", {"browser"}, known) == 8.0
    assert seconds_guessed("tests/a.py::test_plain", set(), known) == 0.0
    assert durations_known(tmp_path / "missing.json") == {}

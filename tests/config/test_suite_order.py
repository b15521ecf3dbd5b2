"""The suite's order on the test processes: the long tests start first, one share on each process."""

from tests.support.order import batch_sizes, long_first


def test_every_test_is_kept_once_and_the_short_ones_keep_their_order():
    items = [f"short{n}" for n in range(30)] + [f"long{n}" for n in range(6)]
    ordered = long_first(items, 4, is_long=lambda item: item.startswith("long"))
    assert sorted(ordered) == sorted(items)
    assert [item for item in ordered if item.startswith("short")] == items[:30]


def test_each_process_first_batch_starts_with_its_share_of_the_long_tests():
    items = [f"long{n}" for n in range(6)] + [f"short{n}" for n in range(30)]
    ordered = long_first(items, 4, is_long=lambda item: item.startswith("long"))
    starts = [0]
    for size in batch_sizes(len(items), 4)[:-1]:
        starts.append(starts[-1] + size)
    heads = [ordered[start : start + 2] for start in starts]
    assert heads == [["long0", "long4"], ["long1", "long5"], ["long2", "short14"], ["long3", "short22"]]


def test_one_process_or_no_long_tests_leaves_the_order_as_it_is():
    items = ["a", "b", "c"]
    assert long_first(items, 1, is_long=lambda item: True) == items
    assert long_first(items, 4, is_long=lambda item: False) == items

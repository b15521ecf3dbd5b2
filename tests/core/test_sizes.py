"""Sizes and rates as people write them."""

import pytest

from core.sizes import size_parse, size_text


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("2 MB/s", 2_000_000),
        ("500kb/s", 500_000),
        ("1.5 MiB/s", 1_572_864),
        ("2,5 MB", 2_500_000),
        ("1000000", 1_000_000),
        ("3 GB per", None),
        ("fast", None),
        ("0", None),
        ("-1 MB", None),
        ("2 XB/s", None),
    ],
)
def test_sizes_read_as_written_or_say_what_to_write(text, size):
    if size is None:
        with pytest.raises(ValueError, match='write it as "2 MB/s"'):
            size_parse(text)
    else:
        assert size_parse(text) == size


def test_a_size_reads_back_as_it_was_written():
    assert [size_text(size_parse(text)) for text in ("2 MB", "500 KB", "1.5 GB", "999")] == [
        "2 MB",
        "500 KB",
        "1.5 GB",
        "999 B",
    ]

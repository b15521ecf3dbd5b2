import pytest

from core.numbers import BIGINT_MAX, whole_number


@pytest.mark.parametrize(
    ("text", "number"),
    [("42", 42), (" 7 ", 7), ("007", 7), (str(BIGINT_MAX), BIGINT_MAX)],
)
def test_ascii_digits_are_a_number(text, number):
    assert whole_number(text) == number


@pytest.mark.parametrize("text", ["", "-1", "+1", "1.5", "¹", "²³", "٣", "１２", str(BIGINT_MAX + 1), "1e3"])
def test_anything_else_is_none_never_an_error(text):
    assert whole_number(text) is None


def test_a_column_smaller_than_a_bigint_sets_the_largest():
    assert whole_number("2147483647", at_most=2**31 - 1) == 2**31 - 1
    assert whole_number("2147483648", at_most=2**31 - 1) is None

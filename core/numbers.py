"""Numbers people and scripts type (an id in a URL or a form, a page, a CSV cell), read without surprises."""

BIGINT_MAX = 2**63 - 1


def whole_number(text: str, *, at_most: int = BIGINT_MAX) -> int | None:
    """The number `text` writes in ASCII digits, or None: a sign, a superscript ("¹", which str.isdigit takes and
    int() refuses), another script's digits, and a number past `at_most` (a database column's largest) are not
    one."""
    text = text.strip()
    if not (text.isascii() and text.isdigit()):
        return None
    number = int(text)
    return number if number <= at_most else None

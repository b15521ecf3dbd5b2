"""Sizes and rates as people write them: "2 MB/s", "500 KiB", "1.5 GB"; and back, for pages."""

import re

UNITS = {
    "": 1,
    "b": 1,
    "k": 1000,
    "kb": 1000,
    "m": 1000**2,
    "mb": 1000**2,
    "g": 1000**3,
    "gb": 1000**3,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
}
_SIZE = re.compile(r"^\s*(\d+(?:[.,]\d+)?)\s*([a-z]*)\s*(?:/\s*s(?:ec(?:ond)?)?)?\s*$", re.IGNORECASE)
EXAMPLES = '"2 MB/s", "500 KB/s", "1.5 MiB/s" or a number of bytes a second'


def size_parse(text: str) -> int:
    """Bytes of "2 MB" (decimal units: 1 MB = 1,000,000 bytes; KiB, MiB, GiB are binary); an optional "/s" is
    allowed, so "2 MB/s" reads as 2,000,000 (bytes a second). ValueError saying what is accepted otherwise."""
    match = _SIZE.match(str(text))
    unit = match and match.group(2).lower()
    if match is None or unit not in UNITS:
        raise ValueError(f"{str(text)!r} is not a size: write it as {EXAMPLES}.")
    value = round(float(match.group(1).replace(",", ".")) * UNITS[unit])
    if value < 1:
        raise ValueError(f"{str(text)!r} is less than one byte: write it as {EXAMPLES}.")
    return value


def size_text(size: int | None) -> str:
    """The one way a size is written, on every page, in the API's words, the bot and CSV: decimal units as
    size_parse reads them, one decimal at most: 651600 → "651.6 KB", 2000000 → "2 MB", 999 → "999 B"; "" for none."""
    if size is None:
        return ""
    if size < 1000:
        return f"{size} B"
    for unit, factor in (("KB", 1000), ("MB", 1000**2), ("GB", 1000**3)):
        if round(size / factor, 1) < 1000:  # 999,960 bytes is "1 MB", not "1000 KB"
            return _in_unit(size / factor, unit)
    return _in_unit(size / 1000**4, "TB")


def rate_text(bytes_per_second: int | None) -> str:
    """ "2 MB/s"; "" for none."""
    return f"{size_text(bytes_per_second)}/s" if bytes_per_second else ""


def _in_unit(value: float, unit: str) -> str:
    return f"{value:,.1f}".removesuffix(".0") + f" {unit}"

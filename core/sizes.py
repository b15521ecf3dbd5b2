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


def size_text(size: int) -> str:
    """2000000 → "2 MB", 1500 → "1.5 KB", 999 → "999 B" (decimal units, as size_parse reads them)."""
    for unit, factor in (("GB", 1000**3), ("MB", 1000**2), ("KB", 1000)):
        if size >= factor:
            return f"{size / factor:.3g} {unit}" if size % factor else f"{size // factor} {unit}"
    return f"{size} B"

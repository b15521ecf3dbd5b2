"""How durations read for the operator, in pages, alerts and notifications alike."""


def format_duration(seconds: float | None) -> str:
    """Seconds as the operator reads them: "45 s", "12 min", "2 h 05 min"; "—" for none."""
    if seconds is None:
        return "—"
    seconds = int(seconds)
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    if seconds < 172800:
        return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
    return f"{seconds // 86400} d {seconds % 86400 // 3600} h"


def plural(count: int, word: str) -> str:
    """ "1 group", "2,000 groups"."""
    return f"{count:,} {word}{'' if count == 1 else 's'}"

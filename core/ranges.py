"""A stored file served with HTTP Range support (RFC 9110 §14): a download that breaks resumes where it stopped,
and a download manager fetches pieces side by side.

One range per request (the first form every client uses); a header this does not understand (several ranges,
another unit, a typo) is ignored and the whole file is sent, as the RFC allows. A range starting past the end
is refused with 416. The file is read a chunk at a time as the client takes it, never whole into memory.
"""

import re
from dataclasses import dataclass
from urllib.parse import quote

from django.http import HttpResponse, StreamingHttpResponse

CHUNK = 1024 * 1024
_SINGLE_RANGE = re.compile(r"^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$", re.IGNORECASE)


class RangeNotSatisfiable(Exception):
    """The range asks for bytes the file does not have."""


@dataclass(frozen=True)
class ByteRange:
    start: int
    end: int  # inclusive, as Content-Range writes it

    @property
    def length(self) -> int:
        return self.end - self.start + 1


def byte_range_parse(*, header: str, size: int) -> ByteRange | None:
    """The one range a Range header asks for, clipped to the file; None for the whole file (no header, or one
    to ignore); RangeNotSatisfiable when it starts past the end (or asks for the last 0 bytes)."""
    match = _SINGLE_RANGE.match(header or "")
    if match is None:
        return None
    first, last = match.groups()
    if first == "" and last == "":
        return None
    if first == "":
        suffix = int(last)
        if suffix == 0 or size == 0:
            raise RangeNotSatisfiable
        return ByteRange(start=max(size - suffix, 0), end=size - 1)
    start = int(first)
    if last != "" and int(last) < start:
        return None  # not a valid range: ignored
    if start >= size:
        raise RangeNotSatisfiable
    return ByteRange(start=start, end=size - 1 if last == "" else min(int(last), size - 1))


def _chunks(opened, start: int, length: int):
    try:
        opened.seek(start)
        left = length
        while left > 0:
            chunk = opened.read(min(CHUNK, left))
            if not chunk:
                return
            left -= len(chunk)
            yield chunk
    finally:
        opened.close()


def attachment_header(name: str) -> str:
    """Content-Disposition naming the file for both old and new clients (RFC 6266)."""
    plain = name.encode("ascii", "replace").decode().replace('"', "'").replace("\\", "_")
    return f"attachment; filename=\"{plain}\"; filename*=UTF-8''{quote(name, safe='')}"


def file_response_ranged(*, opened, size: int, name: str, range_header: str) -> HttpResponse:
    """`opened` (a binary file at any position; closed once sent) as a download: 206 for a range, 200 for the
    whole file, 416 when the range is past the end."""
    try:
        wanted = byte_range_parse(header=range_header, size=size)
    except RangeNotSatisfiable:
        opened.close()
        response = HttpResponse(status=416)
        response["Content-Range"] = f"bytes */{size}"
        response["Accept-Ranges"] = "bytes"
        return response
    start, length = (0, size) if wanted is None else (wanted.start, wanted.length)
    response = StreamingHttpResponse(
        _chunks(opened, start, length), status=200 if wanted is None else 206, content_type="application/octet-stream"
    )
    if wanted is not None:
        response["Content-Range"] = f"bytes {wanted.start}-{wanted.end}/{size}"
    response["Content-Length"] = str(length)
    response["Accept-Ranges"] = "bytes"
    response["Content-Disposition"] = attachment_header(name)
    return response

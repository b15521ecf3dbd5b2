"""One file out of a package's archive: the page's "get" link makes a signed, expiring link (audited) and goes
there; the link streams the file (packages/services/file_links.py), without a login, like the raw-file links."""

from collections.abc import Iterator

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse, HttpResponseRedirect, StreamingHttpResponse
from django.urls import reverse
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_GET, require_safe

from core.ranges import RangeNotSatisfiable, byte_range_parse
from core.security import client_ip
from packages import selectors
from packages.archives import ListingError
from packages.raw_objects import disk_name
from packages.services.downloads import VIEWERS_REFUSED, DownloadLinkRefused, download_links_allowed
from packages.services.file_links import file_bytes, file_link_make, file_link_open, file_link_used
from packages.views.downloads import refused


@login_required
@require_GET
def package_file_get(request, pk: int, file_pk: int):
    if not download_links_allowed(user=request.user):  # refused before saying whether the file exists
        raise PermissionDenied(VIEWERS_REFUSED)
    file = selectors.package_file(package_id=pk, file_id=file_pk)
    if file is None:
        raise Http404("No such file in this package.")
    try:
        link = file_link_make(file=file, user=request.user, path=request.path, address=client_ip(request))
    except DownloadLinkRefused as exc:
        return refused(request, str(exc), exc.status)
    return HttpResponseRedirect(link.url)


@require_safe  # a download manager asks HEAD first, for the size and whether ranges are served
def package_file(request, token: str, name: str):
    """A link works without a login (curl, the viewer): the signature stands for the person. One range per
    request, as for the raw-file links (core.ranges); a member is read from its start, the bytes before the range
    skipped as they stream."""
    try:
        file, maker = file_link_open(token=token)
    except DownloadLinkRefused as exc:
        return refused(request, str(exc), exc.status)
    try:
        wanted = byte_range_parse(header=request.headers.get("Range", ""), size=file.size)
    except RangeNotSatisfiable:
        response = HttpResponse(status=416)
        response["Content-Range"] = f"bytes */{file.size}"
        response["Accept-Ranges"] = "bytes"
        return response
    start, length = (0, file.size) if wanted is None else (wanted.start, wanted.length)
    if request.method == "HEAD":
        response = StreamingHttpResponse([], content_type="application/octet-stream")
    else:
        try:
            chunks = file_bytes(file=file)
        except ListingError as exc:
            return refused(request, str(exc), 422)
        if start == 0:  # a read begun, not one resumed
            # The page's path for this file, not the link's: a signed link is never stored.
            where = reverse("packages:file-get", args=[file.package_id, file.pk])
            file_link_used(file=file, maker=maker, path=where, address=client_ip(request))
        response = StreamingHttpResponse(_slice(chunks, start, length), content_type="application/octet-stream")
    if wanted is not None:
        response.status_code = 206
        response["Content-Range"] = f"bytes {wanted.start}-{wanted.end}/{file.size}"
    response["Content-Length"] = str(length)
    response["Accept-Ranges"] = "bytes"
    response["Content-Disposition"] = content_disposition_header(True, disk_name(file.path.rsplit("/", 1)[-1]))
    response["Cache-Control"] = "private, no-store"
    return response


def _slice(chunks: Iterator[bytes], start: int, length: int) -> Iterator[bytes]:
    """The `length` bytes from `start` of a stream; the stream is closed when they are sent."""
    try:
        position = 0
        for chunk in chunks:
            end = position + len(chunk)
            if end > start:
                piece = chunk[max(start - position, 0) : start + length - position]
                if piece:
                    yield piece
            position = end
            if position >= start + length:
                return
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()

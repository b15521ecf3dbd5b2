"""A download link at work: a raw file from the local disk with Range support, or a redirect to the object
store's presigned link (packages/services/downloads.py)."""

from django.core.files.storage import default_storage
from django.http import HttpResponseRedirect, JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from core import clock
from core.ranges import RangeNotSatisfiable, byte_range_parse, file_response_ranged
from core.security import client_ip
from core.storage import storage_download_url
from packages.raw_objects import disk_name
from packages.services.downloads import DownloadLinkRefused, download_link_open, download_link_used, raw_file_gone

TITLES = {403: "Download link refused", 410: "Download link no longer works", 422: "File cannot be read out"}


def refused(request, message: str, status: int):
    if "text/html" in request.headers.get("Accept", ""):
        context = {"title": TITLES[status], "status": status, "message": message}
        return render(request, "core/error.html", context, status=status)
    return JsonResponse({"message": message}, status=status)


@require_safe  # download managers ask HEAD first, for the size and whether ranges are served
def download(request, token: str, name: str):
    """A link works without a login (curl, a download manager): the signature stands for the person."""
    try:
        link = download_link_open(token=token)
    except DownloadLinkRefused as exc:
        return refused(request, str(exc), exc.status)
    raw = link.raw
    range_header = request.headers.get("Range", "")
    if request.method == "GET" and _begins(range_header, size=raw.size):
        download_link_used(raw=raw, maker=link.maker, path=request.path, address=client_ip(request))
    seconds_left = int((link.expires_at - clock.now()).total_seconds())
    saved_as = disk_name(raw.file_name)  # a name from Telegram, as one file name: no folders
    presigned = storage_download_url(name=raw.object.name, seconds=seconds_left, download_name=saved_as)
    if presigned is not None:
        return HttpResponseRedirect(presigned)
    try:
        opened = default_storage.open(raw.object.name, "rb")
    except FileNotFoundError:
        return refused(request, raw_file_gone(raw=raw), 410)
    size = default_storage.size(raw.object.name)
    return file_response_ranged(opened=opened, size=size, name=saved_as, range_header=range_header)


def _begins(range_header: str, *, size: int) -> bool:
    """Whether a request starts a download (the whole file or from its first byte), not continues one."""
    try:
        wanted = byte_range_parse(header=range_header, size=size)
    except RangeNotSatisfiable:
        return False
    return wanted is None or wanted.start == 0

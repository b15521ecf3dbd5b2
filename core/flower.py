"""Flower, reached through the console only: `/flower/…` is streamed to FLOWER_URL for operators.

Flower runs with `--url_prefix=flower`, listens where only the console reaches it (127.0.0.1 under
`make run`, the compose network in Docker) and asks for FLOWER_BASIC_AUTH, a secret only this proxy
sends. So Flower has the console's login, its lockout after failed tries, and its roles: viewers and
strangers never reach it. Through the console Flower is read-only: GET and HEAD, and the one POST that
only reads (the task table's search); tasks are started by the services, which claim their work first,
never by Flower's task API, and workers are controlled from their hosts.
"""

import base64
import hashlib
import hmac
import http.client
import logging
from http.cookies import SimpleCookie
from urllib.parse import urlsplit

from csp.decorators import csp_update
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import render
from django.views.decorators.csrf import csrf_exempt

from core.audit import audit_exempt
from core.roles import is_operator

logger = logging.getLogger(__name__)

PREFIX = "/flower/"
TIMEOUT_SECONDS = 30
CHUNK = 64 * 1024
REQUEST_HEADERS = ("Accept", "Accept-Encoding", "Accept-Language", "If-Modified-Since", "If-None-Match", "Range")
RESPONSE_HEADERS = (
    "Content-Type",
    "Content-Length",
    "Content-Encoding",
    "Cache-Control",
    "ETag",
    "Last-Modified",
    "Expires",
    "Location",
    "Content-Range",
    "Accept-Ranges",
)
READ_ONLY = "Flower is read-only through the console: act on runs from Activity, Runs and Skipped."
# Flower's task table asks for its rows by POST (with Flower's own _xsrf cookie and header): a read.
READ_POSTS = (f"{PREFIX}tasks/datatable",)
FLOWER_COOKIE = "_xsrf"  # the only cookie passed between the browser and Flower; never the console's
# Flower's one inline script (templates/workers.html, as Tornado renders it), allowed by its hash alone.
INLINE_SCRIPTS = ("\nvar autorefresh = 0;\n", "\nvar autorefresh = 1;\n")
SCRIPT_HASHES = [
    "'sha256-" + base64.b64encode(hashlib.sha256(script.encode()).digest()).decode() + "'" for script in INLINE_SCRIPTS
]


def _refused(request, message: str, status: int) -> HttpResponse:
    if request.path.startswith(f"{PREFIX}api/"):
        return JsonResponse({"message": message}, status=status)
    return render(request, "core/forbidden.html", {"message": message}, status=status)


def _upstream(request) -> http.client.HTTPResponse:
    target = urlsplit(settings.FLOWER_URL)
    connection_class = http.client.HTTPSConnection if target.scheme == "https" else http.client.HTTPConnection
    connection = connection_class(target.hostname, target.port, timeout=TIMEOUT_SECONDS)
    headers = {name: request.headers[name] for name in REQUEST_HEADERS if name in request.headers}
    if settings.FLOWER_BASIC_AUTH:
        headers["Authorization"] = "Basic " + base64.b64encode(settings.FLOWER_BASIC_AUTH.encode()).decode()
    if FLOWER_COOKIE in request.COOKIES:
        headers["Cookie"] = f"{FLOWER_COOKIE}={request.COOKIES[FLOWER_COOKIE]}"
    body = None
    if request.method == "POST":
        # Re-encoded from the parsed form: the body stream was read before the view (core.middleware).
        body = request.POST.urlencode().encode()
        headers["Content-Type"] = "application/x-www-form-urlencoded"
        headers["X-XSRFToken"] = request.headers.get("X-XSRFToken", "")
    connection.request(request.method, request.get_full_path(), body=body, headers=headers)
    return connection.getresponse()


def _chunks(upstream: http.client.HTTPResponse):
    try:
        while chunk := upstream.read(CHUNK):
            yield chunk
    finally:
        upstream.close()


@csp_update({"script-src": SCRIPT_HASHES})
@login_required
def flower_proxy(request, path: str = "") -> HttpResponse:
    if not is_operator(request.user):
        return _refused(request, "Flower is for operators; ask one if you need to see the queues.", 403)
    if request.method not in ("GET", "HEAD") and not (request.method == "POST" and request.path in READ_POSTS):
        response = _refused(request, READ_ONLY, 405)
        response["Allow"] = "GET, HEAD"
        return response
    try:
        upstream = _upstream(request)
    except OSError as exc:
        logger.warning("Flower at %s did not answer: %s", settings.FLOWER_URL, exc)
        return _refused(request, "Flower is not answering; check that its process runs (Operations page).", 502)
    response = StreamingHttpResponse(_chunks(upstream), status=upstream.status)
    for name in RESPONSE_HEADERS:
        value = upstream.getheader(name)
        if value is not None:
            response[name] = value
    for header in upstream.headers.get_all("Set-Cookie") or []:
        for name, morsel in SimpleCookie(header).items():
            if name == FLOWER_COOKIE:
                response.set_cookie(name, morsel.value, path=PREFIX, samesite="Strict", secure=request.is_secure())
    return response


@audit_exempt
@csrf_exempt
@login_required
def flower_read_post(request, path: str = "") -> HttpResponse:
    """The task table's POST carries Flower's own double-submitted _xsrf token (cookie and header), not the
    console's CSRF token: the same check, made here before Flower makes it again."""
    cookie, header = request.COOKIES.get(FLOWER_COOKIE, ""), request.headers.get("X-XSRFToken", "")
    if request.method == "POST" and not (cookie and hmac.compare_digest(cookie, header)):
        return _refused(request, "The request lacks Flower's _xsrf token; reload the page.", 403)
    return flower_proxy(request, path)

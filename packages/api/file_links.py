"""API for one file out of a package's kept archive: a signed, expiring link to it, as the page's Get makes.

Who may make one follows the page (DOWNLOAD_LINKS_FOR_VIEWERS), not the operators-only rule of other changes:
an operator (login, or a token with scope write), or a logged-in viewer when the setting is on. A read token is
refused before anything, as for every change."""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from core.access import LOGGED_IN, ScopeAndRole
from core.api import ErrorSerializer
from packages import selectors
from packages.services.downloads import VIEWERS_REFUSED, DownloadLinkRefused, download_links_allowed
from packages.services.file_links import file_link_make


class FileLinkSerializer(serializers.Serializer):
    url = serializers.URLField(
        help_text="Works without a login until expires_at, with HTTP Range support; names the person who made it."
    )
    expires_at = serializers.DateTimeField(help_text="When the link stops working (ISO 8601, with its zone).")
    path = serializers.CharField(help_text="The file's path inside the archive.")
    size = serializers.IntegerField(help_text="The file's size in bytes, unpacked.")


class PackageFileLinkView(ScopeAndRole, APIView):
    changes_by = LOGGED_IN  # viewers too, when DOWNLOAD_LINKS_FOR_VIEWERS is on: checked below, as on the page

    @extend_schema(
        summary="Make a signed link to one file inside the package's archive",
        description="The link works without a login until `expires_at` (DOWNLOAD_LINK_SECONDS) and serves HTTP "
        "Range requests; making it and reading through it are audited. Operators (a token needs scope write), or "
        "viewers when DOWNLOAD_LINKS_FOR_VIEWERS is on. `file_id` is a file's id in the package's listing.",
        request=None,
        responses={
            200: FileLinkSerializer,
            403: OpenApiResponse(ErrorSerializer, description="Not allowed to make links, or the file is encrypted."),
            404: OpenApiResponse(ErrorSerializer, description="No such file in this package."),
            410: OpenApiResponse(ErrorSerializer, description="The package's archive is no longer kept."),
        },
    )
    def post(self, request, pk: int, file_id: int):
        if not download_links_allowed(user=request.user):  # refused before saying whether the file exists
            return Response({"message": VIEWERS_REFUSED}, status=403)
        file = selectors.package_file(package_id=pk, file_id=file_id)
        if file is None:
            return Response({"message": "No such file in this package: see the package's `files`."}, status=404)
        try:
            link = file_link_make(file=file, user=request.user, path=request.path)
        except DownloadLinkRefused as exc:
            return Response({"message": str(exc)}, status=exc.status)
        data = {
            "url": request.build_absolute_uri(link.url),
            "expires_at": link.expires_at,
            "path": file.path,
            "size": file.size,
        }
        return Response(FileLinkSerializer(data).data)

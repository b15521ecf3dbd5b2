"""One package's page: its file tree with the search's matches, its download links, its preview picker, its
collection, the answer to "likely the same as …"; and the thumbnails (logged-in users only)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.storage import default_storage
from django.http import FileResponse, Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from core.errors import OperatorError
from core.forms import error_text
from core.security import client_ip
from packages import grouping, previews, selectors, services
from packages.forms import RepackDecisionForm
from packages.models import Collection, PackagePreview
from packages.services.downloads import (
    VIEWERS_REFUSED,
    DownloadLinkRefused,
    download_links_allowed,
    download_links_make,
)
from packages.views.shared import DETAIL, detail_context, id_of, package_or_404


@login_required
@require_GET
def package_detail(request, pk: int):
    query = request.GET.get("q", "").strip()
    return render(request, DETAIL, detail_context(package_or_404(pk), query=query))


@login_required
@require_GET
def package_download_links(request, pk: int):
    """Fresh links to the package's raw files: a GET, so that viewers may ask too when allowed (it is audited)."""
    if not download_links_allowed(user=request.user):  # refused before saying whether the package exists
        raise PermissionDenied(VIEWERS_REFUSED)
    package = package_or_404(pk)
    try:
        links = download_links_make(package=package, user=request.user, path=request.path, address=client_ip(request))
    except DownloadLinkRefused as exc:
        answer, status = {"refused": str(exc)}, exc.status
    else:
        answer, status = {"download_links": links}, 200
    if request.htmx:
        return render(request, "packages/downloads.html#links", {"package": package, **answer}, status=status)
    return render(request, DETAIL, detail_context(package, **answer), status=status)


@login_required
@require_GET
def preview_image(request, pk: int, preview_pk: int):
    """A thumbnail, read through the storage (local disk or an object store), never a public URL."""
    try:
        preview = selectors.preview_get(package_id=pk, preview_id=preview_pk)
    except PackagePreview.DoesNotExist:
        raise Http404("No such preview.") from None
    try:
        image = default_storage.open(preview.image.name, "rb")
    except FileNotFoundError:
        raise Http404("The thumbnail's file is missing from the storage.") from None
    response = FileResponse(image, content_type="image/jpeg")
    # A preview's file never changes (a new image is a new preview): the browser may keep it, privately.
    response["Cache-Control"] = "private, max-age=86400"
    return response


@login_required
@require_POST
def preview_choose(request, pk: int):
    package = package_or_404(pk)
    notice, is_error = "Preview changed.", False
    try:
        previews.package_preview_choose(package=package, preview_id=id_of(request.POST.get("preview")))
    except (ValidationError, ValueError) as exc:
        notice, is_error = (error_text(exc) if isinstance(exc, ValidationError) else "Choose an image."), True
    package = package_or_404(pk)
    if not request.htmx:  # the form posted before htmx was loaded (or without JavaScript): the notice on the page
        (messages.error if is_error else messages.success)(request, notice)
        return redirect("packages:detail", pk=pk)
    context = detail_context(package, preview_notice=notice, preview_notice_is_error=is_error)
    return render(request, f"{DETAIL}#preview-panel", context)


@login_required
@require_POST
def package_collect(request, pk: int):
    """Put the package in a collection: an existing one (`collection`), or a new one named `name`."""
    package = package_or_404(pk)
    try:
        if request.POST.get("collection"):
            collection = Collection.objects.filter(pk=id_of(request.POST["collection"])).first()
            if collection is None:
                raise ValidationError({"collection": "That collection no longer exists."})
            grouping.collection_add(collection=collection, package=package)
        else:
            grouping.collection_create(name=request.POST.get("name", ""), package_ids=[package.pk])
    except (ValidationError, ValueError) as exc:
        notice = error_text(exc) if isinstance(exc, ValidationError) else "Choose a collection."
        context = detail_context(
            package_or_404(pk), collection_notice=notice, collection_name=request.POST.get("name", "")
        )
        return render(request, DETAIL, context, status=400)
    return redirect("packages:detail", pk=pk)


@login_required
@require_POST
def package_repack_decide(request, pk: int):
    package = package_or_404(pk)
    form = RepackDecisionForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose to keep both, or to skip future copies.")
        return redirect("packages:detail", pk=pk)
    try:
        services.package_repack_decide(package=package, decision=form.cleaned_data["decision"])
    except OperatorError as exc:
        messages.error(request, exc.message)
    else:
        if form.cleaned_data["decision"] == "kept":
            messages.success(request, "Kept both: this package is no longer marked as a likely repack.")
        else:
            messages.success(request, "Future copies with this listing will count as duplicates and not be uploaded.")
    return redirect("packages:detail", pk=pk)

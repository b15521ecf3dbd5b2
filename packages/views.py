"""The Packages page (search over names and archive listings) and one package's detail."""

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import render
from django.views.decorators.http import require_GET
from django.views.decorators.vary import vary_on_headers

from core.pagination import CappedPaginator
from packages import selectors
from packages.models import Package

PAGE = "packages/list.html"
DETAIL = "packages/detail.html"
PER_PAGE = 25
# A search counts its matches up to here ("1,000+ packages match"): 40 pages are more than anyone reads.
SEARCH_COUNT_CAP = 1000


@login_required
@require_GET
@vary_on_headers("HX-Request")  # the same URL answers the whole page or only the results
def package_list(request):
    query = request.GET.get("q", "").strip()
    locked = request.GET.get("locked") == "1"
    found = selectors.package_search(query=query, needs_password=locked)
    paginator = CappedPaginator(found, PER_PAGE, cap=SEARCH_COUNT_CAP) if query else Paginator(found, PER_PAGE)
    packages = paginator.get_page(request.GET.get("page"))
    context = {"packages": packages, "query": query, "locked": locked}
    if request.htmx and not request.htmx.history_restore_request:
        return render(request, f"{PAGE}#package-results", context)
    return render(request, PAGE, context)


@login_required
@require_GET
def package_detail(request, pk: int):
    try:
        package = selectors.package_get(pk=pk)
    except Package.DoesNotExist:
        raise Http404("No such package.") from None
    context = {
        "package": package,
        "folders": selectors.package_folders(package=package),
        "source_topic": package.source_topic_name,
        "dest_parts": list(zip(package.dest_part_names, package.dest_message_ids, strict=False)),
    }
    return render(request, DETAIL, context)

"""The Packages page: search, filters, sort, as a list or a grid of previews; creator and tags edited inline and
in bulk."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from core.pagination import CappedPaginator
from packages import selectors, services
from packages.forms import PackageBulkEditForm, PackageEditForm, PackageFilterForm
from packages.models import Package
from packages.views.shared import GRID_PER_PAGE, PAGE, PER_PAGE, package_or_404


def _view_of(request) -> str:
    return "grid" if request.GET.get("view") == "grid" else "list"


# A search counts its matches up to here ("1,000+ packages match"): 40 pages are more than anyone reads.
SEARCH_COUNT_CAP = 1000


def _results_context(request, *, notice: str = "", bulk_form=None) -> dict:
    form = PackageFilterForm(request.GET)
    form.is_valid()
    filters = form.filters()
    view = _view_of(request)
    found = selectors.package_search(filters=filters)
    per_page = GRID_PER_PAGE if view == "grid" else PER_PAGE
    paginator = CappedPaginator(found, per_page, cap=SEARCH_COUNT_CAP) if filters.query else Paginator(found, per_page)
    return {
        "packages": paginator.get_page(request.GET.get("page")),
        "view": view,
        "filter_form": form,
        "filters": filters,
        "query": filters.query,
        "locked": filters.needs_password,
        "choices": selectors.package_filter_choices(),
        "filter_errors": [
            (form.fields[name].label or name.replace("_", " ").capitalize(), error)
            for name, errors in form.errors.items()
            if name in form.fields
            for error in errors
        ],
        "notice": notice,
        "bulk_form": bulk_form,
        # A refused bulk edit keeps the ticks, as a form keeps its input.
        "ticked": {int(value) for value in request.POST.getlist("packages") if value.isdecimal()}
        if bulk_form
        else set(),
    }


@login_required
@require_GET
@vary_on_headers("HX-Request")  # the same URL answers the whole page or only the results
def package_list(request):
    context = _results_context(request)
    if request.htmx and not request.htmx.history_restore_request:
        return render(request, f"{PAGE}#package-results", context)
    return render(request, PAGE, context)


@login_required
@require_POST
def package_bulk_edit(request):
    """Tick packages, then set their creator or add and remove tags; the results keep the page's filters
    (the form posts to the page's own query string)."""
    form = PackageBulkEditForm(request.POST)
    if form.is_valid():
        try:
            count = services.packages_bulk_edit(
                package_ids=form.cleaned_data["packages"],
                creator=form.cleaned_data["creator"].strip() or None,
                add_tags=form.cleaned_data["add_tags"],
                remove_tags=form.cleaned_data["remove_tags"],
            )
        except ValidationError as exc:
            form.add_error(None, exc.messages[0])
        else:
            notice = f"{count} package{'' if count == 1 else 's'} edited."
            if request.htmx:
                return render(request, f"{PAGE}#package-results", _results_context(request, notice=notice))
            messages.success(request, notice)
            return redirect(f"{reverse('packages:list')}?{request.GET.urlencode()}")
    context = _results_context(request, bulk_form=form)
    if request.htmx:
        return render(request, f"{PAGE}#package-results", context)
    return render(request, PAGE, context)


@login_required
@require_http_methods(["GET", "POST"])
def package_edit(request, pk: int):
    """The creator and tags of one package, edited in place (its row on the list, its facts on its page)."""
    package = package_or_404(pk)
    where = "detail" if request.GET.get("from") == "detail" else "row"
    if request.method == "GET":
        if request.GET.get("cancel"):
            return _edited(request, package, where)
        form = PackageEditForm(initial={"creator": package.creator, "tags": ", ".join(package.tags)})
        return render(request, f"packages/edit.html#edit-{where}", {"package": package, "form": form})
    form = PackageEditForm(request.POST)
    if form.is_valid():
        try:
            services.package_edit(package=package, creator=form.cleaned_data["creator"], tags=form.cleaned_data["tags"])
        except ValidationError as exc:
            for field, errors in exc.message_dict.items():
                form.add_error(field if field in form.fields else None, errors)
        else:
            return _edited(request, package, where, notice="Saved.")
    return render(request, f"packages/edit.html#edit-{where}", {"package": package, "form": form})


def _edited(request, package: Package, where: str, *, notice: str = ""):
    return render(request, f"packages/edit.html#shown-{where}", {"package": package, "edit_notice": notice})

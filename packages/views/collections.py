"""Collections: the list, one collection's page, renaming, merging and dissolving."""

from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect

from core.forms import error_text
from packages import grouping, selectors
from packages.views.shared import COLLECTION, COLLECTIONS, GRID_PER_PAGE, collection_context, collection_or_404, id_of


@login_required
@require_GET
def collection_list(request):
    collections = Paginator(selectors.collection_list(), GRID_PER_PAGE).get_page(request.GET.get("page"))
    return render(request, COLLECTIONS, {"collections": collections})


@login_required
@require_GET
def collection_detail(request, pk: int):
    collection = collection_or_404(pk)
    return render(request, COLLECTION, collection_context(collection, request))


@login_required
@require_POST
def collection_edit(request, pk: int):
    """Rename (`name`), merge into another (`into`) or dissolve (`dissolve`): one form per action."""
    collection = collection_or_404(pk)
    try:
        if "dissolve" in request.POST:
            grouping.collection_dissolve(collection=collection)
            if request.htmx:  # asked through hx-confirm: the browser goes to the list itself
                return HttpResponseClientRedirect(reverse("packages:collections"))
            return redirect("packages:collections")
        if "into" in request.POST:
            into = grouping.collection_merge(collection=collection, into_id=id_of(request.POST["into"]))
            return redirect("packages:collection", pk=into.pk)
        grouping.collection_rename(collection=collection, name=request.POST.get("name", ""))
    except (ValidationError, ValueError) as exc:
        notice = error_text(exc) if isinstance(exc, ValidationError) else "Choose a collection to merge into."
        context = collection_context(collection, request, notice=notice, name=request.POST.get("name", collection.name))
        return render(request, COLLECTION, context, status=400)
    return redirect("packages:collection", pk=pk)

"""The Audit page: who changed what, filtered; viewers read it too (docs/decisions/0114-*.md), the addresses are shown
to operators only."""

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import render
from django.views.decorators.http import require_GET

from core import selectors
from core.forms import AuditFilterForm
from core.roles import is_operator

AUDIT_PAGE = "core/audit.html"
AUDIT_PER_PAGE = 50


@login_required
@require_GET
def audit_list(request):
    form = AuditFilterForm(request.GET or None)
    filters = form.cleaned_data if form.is_valid() else {}
    entries = selectors.audit_entries(**{name: value for name, value in filters.items() if value})
    page = Paginator(entries, AUDIT_PER_PAGE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "form": form,
        "page": page,
        "query": query.urlencode(),
        "kinds": selectors.audit_kinds(),
        "show_address": is_operator(request.user),
    }
    template = f"{AUDIT_PAGE}#audit-table" if request.htmx else AUDIT_PAGE
    return render(request, template, context)

"""The catalog audit's buttons on the Operations page: audit now, rebuild from the destination, repair what is
missing."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from core import task_names
from core.errors import OperatorError
from core.formatting import plural
from core.forms import error_text
from ingestion import audit as audit_module
from ingestion import services
from ingestion.models import CatalogAudit


@login_required
@require_POST
def catalog_audit_now(request):
    services.catalog_task_send(task_names.CATALOG_AUDIT)
    messages.success(request, "Audit queued: the results show here when it is done.")
    return redirect(reverse("operations") + "#catalog-audit")


@login_required
@require_POST
def catalog_rebuild_now(request):
    if services.destination_get() is None:
        messages.error(request, "No destination channel is set: pick one on the Channels page first.")
    else:
        services.catalog_task_send(task_names.CATALOG_REBUILD)
        messages.success(request, "Rebuild queued: a notification says what it added and repaired.")
    return redirect(reverse("operations") + "#catalog-audit")


@login_required
@require_POST
def catalog_repair_missing(request, pk: int):
    audit = get_object_or_404(CatalogAudit, pk=pk)
    try:
        count = audit_module.catalog_audit_repair_missing(audit=audit)
    except OperatorError as exc:
        messages.error(request, error_text(exc))
    else:
        messages.success(request, f"{plural(count, 'package')} will be uploaded again by the next cycle.")
    return redirect(reverse("operations") + "#catalog-audit")

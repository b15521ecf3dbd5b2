from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from core.selectors import dashboard_summary


@login_required
def dashboard(request):
    return render(request, "core/dashboard.html", {"summary": dashboard_summary()})

"""The Audiences pages: the list, one audience's filters with a live preview of who matches, a CSV import."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from reminders import selectors, services
from reminders.forms.audiences import AudienceForm, AudienceImportForm
from reminders.models import Audience
from reminders.services import AudienceError
from reminders.services.audiences import CSV_MAX_BYTES

LIST = "reminders/audiences.html"
EDIT = "reminders/audience.html"
PREVIEW_SHOWN = 50


@login_required
@require_GET
def audience_list(request):
    return render(request, LIST, {"audiences": selectors.audience_list()})


@login_required
@require_http_methods(["GET", "POST"])
def audience_edit(request, pk: int | None = None):
    audience = get_object_or_404(selectors.audience_list(), pk=pk) if pk is not None else None
    form = AudienceForm(request.POST or None, audience=audience)
    if request.method == "POST" and form.is_valid():
        try:
            saved = services.audience_save(
                account=form.cleaned_data["account"],
                name=form.cleaned_data["name"],
                filters=form.filters(),
                audience=audience,
            )
        except AudienceError as exc:
            for problem in exc.problems:
                form.add_error(None, problem)
        else:
            count = saved.members.count()
            messages.success(request, f"“{saved}” saved: {count} group{'s' if count != 1 else ''}.")
            return redirect("reminders:audience", saved.pk)
    context = {"form": form, "audience": audience, "import_form": AudienceImportForm() if audience is None else None}
    return render(request, EDIT, context)


@login_required
@require_GET
def audience_preview(request):
    """Who the filters being typed match, how many (HTMX, as the operator types)."""
    form = AudienceForm(request.GET)
    form.fields["name"].required = False
    context = {"matches": None, "shown": PREVIEW_SHOWN}
    if form.is_valid():
        filters = form.filters()
        context["problems"] = filters.problems()
        if not context["problems"]:
            matches = services.audience_matches(account=form.cleaned_data["account"], filters=filters)
            context.update(matches=matches[:PREVIEW_SHOWN], count=matches.count())
    return render(request, f"{EDIT}#preview", context)


@login_required
@require_POST
def audience_import(request):
    form = AudienceImportForm(request.POST, request.FILES)
    problems = []
    if form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            if upload.size > CSV_MAX_BYTES:
                raise AudienceError([f"The file is larger than {CSV_MAX_BYTES:,} bytes."])
            text = upload.read().decode("utf-8-sig")
            audience = services.audience_import(
                account=form.cleaned_data["account"], name=form.cleaned_data["name"], text=text
            )
        except UnicodeDecodeError:
            problems = ["The file is not UTF-8 text; save the CSV as UTF-8."]
        except AudienceError as exc:
            problems = exc.problems
        else:
            count = audience.members.count()
            messages.success(request, f"“{audience}” imported: {count} group{'s' if count != 1 else ''}.")
            return redirect("reminders:audience", audience.pk)
    context = {"form": AudienceForm(), "audience": None, "import_form": form, "import_problems": problems}
    return render(request, EDIT, context, status=400)


@login_required
@require_POST
def audience_delete(request, pk: int):
    audience = get_object_or_404(Audience, pk=pk)
    try:
        services.audience_delete(audience=audience)
    except AudienceError as exc:
        messages.error(request, str(exc))
        return redirect("reminders:audience", pk)
    messages.success(request, f"“{audience}” is deleted.")
    return redirect("reminders:audiences")

"""The Packages page (search, filters, sort, as a list or a grid of previews; creator and tags edited inline and
in bulk), one package's detail (its file tree with the search's matches, its preview picker, the answer to "likely
the same as …"), the thumbnails (logged-in users only), and collections."""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.storage import default_storage
from django.core.paginator import Paginator
from django.http import FileResponse, Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseClientRedirect, HttpResponseStopPolling

from accounts.models import Chat, ChatTopic, TelegramAccount
from core.errors import OperatorError
from core.forms import error_text
from core.pagination import CappedPaginator
from core.roles import is_operator
from core.security import client_ip
from packages import grouping, previews, selectors, sending, services
from packages.forms import PackageBulkEditForm, PackageEditForm, PackageFilterForm, RepackDecisionForm
from packages.models import Collection, GroupingRule, Package, PackagePreview, PackageSend
from packages.passwords import caption_masked
from packages.services.downloads import (
    VIEWERS_REFUSED,
    DownloadLinkRefused,
    download_links_allowed,
    download_links_make,
)

PAGE = "packages/list.html"
DETAIL = "packages/detail.html"
COLLECTIONS = "packages/collections.html"
COLLECTION = "packages/collection.html"
PER_PAGE = 25
GRID_PER_PAGE = 24  # rows of 2, 3, 4 or 6 cards come out even
SENDS_SHOWN = 10


ID_MAX = 2**63 - 1


def _id_of(value) -> int:
    """An id from a form, or ValueError: the database is never asked about a number it cannot hold."""
    number = int(value or 0)
    if not 1 <= number <= ID_MAX:
        raise ValueError(value)
    return number


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
    package = _package_or_404(pk)
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


def _package_or_404(pk: int) -> Package:
    try:
        return selectors.package_get(pk=pk)
    except Package.DoesNotExist:
        raise Http404("No such package.") from None


def _detail_context(package: Package, query: str = "", **extra) -> dict:
    matched = selectors.package_matched_paths(package=package, query=query)
    return {
        "package": package,
        "folders": selectors.package_folders(package=package, matched=matched),
        "query": query,
        "matched_count": len(matched),
        "source_topic": package.source_topic_name,
        # The template shows the one for its reader: as posted to operators, passwords masked to viewers.
        "caption_posted": selectors.package_caption_shown(package=package, operator=True),
        "caption_masked": selectors.package_caption_shown(package=package, operator=False),
        # Unsealed only when an operator's page renders it.
        "package_password": lambda: selectors.package_password(package=package),
        "dest_parts": list(zip(package.dest_part_names, package.dest_message_ids, strict=False)),
        "previews": selectors.package_previews(package=package),
        "collections": selectors.collection_choices(exclude_id=package.collection_id),
        "rules": GroupingRule,
        "send_options": _send_options(package.destination_chat_id),
        "send_caption": package.caption,
        "viewers_may_download": settings.DOWNLOAD_LINKS_FOR_VIEWERS,
        "link_minutes": settings.DOWNLOAD_LINK_SECONDS // 60,
        **_sends_context(package=package),
        **extra,
    }


@login_required
@require_GET
def package_detail(request, pk: int):
    query = request.GET.get("q", "").strip()
    return render(request, DETAIL, _detail_context(_package_or_404(pk), query=query))


@login_required
@require_GET
def package_download_links(request, pk: int):
    """Fresh links to the package's raw files: a GET, so that viewers may ask too when allowed (it is audited)."""
    if not download_links_allowed(user=request.user):  # refused before saying whether the package exists
        raise PermissionDenied(VIEWERS_REFUSED)
    package = _package_or_404(pk)
    try:
        links = download_links_make(package=package, user=request.user, path=request.path, address=client_ip(request))
    except DownloadLinkRefused as exc:
        answer, status = {"refused": str(exc)}, exc.status
    else:
        answer, status = {"download_links": links}, 200
    if request.htmx:
        return render(request, "packages/downloads.html#links", {"package": package, **answer}, status=status)
    return render(request, DETAIL, _detail_context(package, **answer), status=status)


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
    package = _package_or_404(pk)
    notice, is_error = "Preview changed.", False
    try:
        previews.package_preview_choose(package=package, preview_id=_id_of(request.POST.get("preview")))
    except (ValidationError, ValueError) as exc:
        notice, is_error = (error_text(exc) if isinstance(exc, ValidationError) else "Choose an image."), True
    package = _package_or_404(pk)
    if not request.htmx:
        return redirect("packages:detail", pk=pk)
    context = _detail_context(package, preview_notice=notice, preview_notice_is_error=is_error)
    return render(request, f"{DETAIL}#preview-panel", context)


@login_required
@require_POST
def package_collect(request, pk: int):
    """Put the package in a collection: an existing one (`collection`), or a new one named `name`."""
    package = _package_or_404(pk)
    try:
        if request.POST.get("collection"):
            collection = Collection.objects.filter(pk=_id_of(request.POST["collection"])).first()
            if collection is None:
                raise ValidationError({"collection": "That collection no longer exists."})
            grouping.collection_add(collection=collection, package=package)
        else:
            grouping.collection_create(name=request.POST.get("name", ""), package_ids=[package.pk])
    except (ValidationError, ValueError) as exc:
        notice = error_text(exc) if isinstance(exc, ValidationError) else "Choose a collection."
        context = _detail_context(
            _package_or_404(pk), collection_notice=notice, collection_name=request.POST.get("name", "")
        )
        return render(request, DETAIL, context, status=400)
    return redirect("packages:detail", pk=pk)


@login_required
@require_GET
def collection_list(request):
    collections = Paginator(selectors.collection_list(), GRID_PER_PAGE).get_page(request.GET.get("page"))
    return render(request, COLLECTIONS, {"collections": collections})


def _collection_context(collection: Collection, request, **extra) -> dict:
    packages = Paginator(selectors.package_search(collection_id=collection.pk), GRID_PER_PAGE)
    sendable = Package.objects.filter(collection=collection, destination_chat__isnull=False)
    return {
        "send_options": _send_options(*sendable.values_list("destination_chat_id", flat=True).distinct()),
        "send_message_count": sum(len(ids) for ids in sendable.values_list("dest_message_ids", flat=True)),
        **_sends_context(collection=collection),
        "collection": collection,
        "packages": packages.get_page(request.GET.get("page")),
        "others": selectors.collection_choices(exclude_id=collection.pk),
        "name": collection.name,
        **extra,
    }


def _collection_or_404(pk: int) -> Collection:
    try:
        return selectors.collection_get(pk=pk)
    except Collection.DoesNotExist:
        raise Http404("No such collection.") from None


@login_required
@require_GET
def collection_detail(request, pk: int):
    collection = _collection_or_404(pk)
    return render(request, COLLECTION, _collection_context(collection, request))


@login_required
@require_POST
def collection_edit(request, pk: int):
    """Rename (`name`), merge into another (`into`) or dissolve (`dissolve`): one form per action."""
    collection = _collection_or_404(pk)
    try:
        if "dissolve" in request.POST:
            grouping.collection_dissolve(collection=collection)
            if request.htmx:  # asked through hx-confirm: the browser goes to the list itself
                return HttpResponseClientRedirect(reverse("packages:collections"))
            return redirect("packages:collections")
        if "into" in request.POST:
            into = grouping.collection_merge(collection=collection, into_id=_id_of(request.POST["into"]))
            return redirect("packages:collection", pk=into.pk)
        grouping.collection_rename(collection=collection, name=request.POST.get("name", ""))
    except (ValidationError, ValueError) as exc:
        notice = error_text(exc) if isinstance(exc, ValidationError) else "Choose a collection to merge into."
        context = _collection_context(
            collection, request, notice=notice, name=request.POST.get("name", collection.name)
        )
        return render(request, COLLECTION, context, status=400)
    return redirect("packages:collection", pk=pk)


# Send to Telegram -------------------------------------------------------------------------------------------------


def _send_options(*destination_ids: int) -> list[tuple[str, list[tuple[str, str]]]]:
    """The Send form's option groups: per account that reads every destination chat involved, (value, label) of
    each chat, and each forum topic, it may post in; then, apart, the people it has a private chat with."""
    options = []
    for account, chats in sending.package_send_choices(destination_ids=destination_ids):
        by_chat: dict[int, list[ChatTopic]] = {}
        for topic in ChatTopic.objects.filter(chat__in=[chat for chat in chats if chat.is_forum]):
            by_chat.setdefault(topic.chat_id, []).append(topic)
        choices, people = [], []
        for chat in chats:
            if chat.is_person:
                people.append((f"{account.pk}:{chat.pk}:", chat.label))
                continue
            choices.append((f"{account.pk}:{chat.pk}:", chat.title))
            choices += [
                (f"{account.pk}:{chat.pk}:{topic.topic_id}", f"{chat.title} / {topic.title}")
                for topic in by_chat.get(chat.pk, [])
            ]
        if choices:
            options.append((f"through {account}", choices))
        if people:
            options.append((f"People, through {account}", people))
    return options


def _sends_context(*, package: Package | None = None, collection: Collection | None = None) -> dict:
    sends = list(selectors.package_sends(package=package, collection=collection)[:SENDS_SHOWN])
    return {"sends": sends, "sends_live": any(send.is_live for send in sends)}


def _an_id(text: str) -> bool:
    """A database id: digits, and small enough for a bigint."""
    return text.isdecimal() and int(text) < 2**63


def _send_target(data) -> tuple[str, TelegramAccount | None, Chat | None, int | None, str]:
    """The picked `account:chat:topic` (of the form's data), or the error to show."""
    target = data.get("target", "")
    account_id, _, rest = target.partition(":")
    chat_id, _, topic_id = rest.partition(":")
    if not (_an_id(account_id) and _an_id(chat_id) and (topic_id == "" or _an_id(topic_id))):
        return target, None, None, None, "Pick the chat or the person to send to."
    account = TelegramAccount.objects.filter(pk=account_id).first()
    chat = Chat.objects.filter(pk=chat_id).first()
    if account is None or chat is None:
        return target, None, None, None, "That account, chat or person is gone; pick again."
    return target, account, chat, int(topic_id) if topic_id else None, ""


def _send_caption(data, *, collection: Collection | None) -> str | None:
    """The form's caption: what a package's recipients read (it starts as the source caption; emptied, none); on
    a collection, empty leaves each package its own source caption."""
    caption = data.get("caption")
    if caption is None:
        return None
    caption = caption.replace("\r\n", "\n").strip()
    return (caption or None) if collection else caption


def _send(request, *, packages: list[Package], collection: Collection | None = None):
    """Queue the send; the refusal to show (the pick kept) or ''."""
    target, account, chat, topic_id, error = _send_target(request.POST)
    if error:
        return target, error
    try:
        send = sending.package_send_create(
            packages=packages,
            chat=chat,
            account=account,
            topic_id=topic_id,
            collection=collection,
            caption=_send_caption(request.POST, collection=collection),
        )
    except (ValidationError, OperatorError) as exc:
        return target, error_text(exc)
    parts = send.parts_total
    messages.success(request, f"Sending {parts} part{'s' if parts != 1 else ''} to {chat.title}.")
    return target, ""


@login_required
@require_POST
def package_send(request, pk: int):
    """Send to Telegram from the package page; a refusal shows on the form, with the pick kept."""
    package = _package_or_404(pk)
    target, error = _send(request, packages=[package])
    if error:
        context = _detail_context(
            package, send_error=error, send_target=target, send_caption=request.POST.get("caption", package.caption)
        )
        return render(request, DETAIL, context, status=400)
    return redirect("packages:detail", pk=package.pk)


def _send_preview(request, *, packages: list[Package], collection: Collection | None = None) -> HttpResponse:
    """The Send form's preview: each message as the recipient will get it, and whether Telegram takes its
    caption (the limit of the account picked, else the usual one)."""
    _, account, chat, _, _ = _send_target(request.GET)
    captions = sending.package_send_captions(
        packages=packages, caption=_send_caption(request.GET, collection=collection)
    )
    error = ""
    try:
        sending.package_send_caption_check(captions=captions, account=account or TelegramAccount(is_premium=False))
    except ValidationError as exc:
        error = error_text(exc)
    if not is_operator(request.user):  # viewers never send; they may not read a caption's password here either
        captions = [caption_masked(caption) for caption in captions]
    names = [name for package in packages for name in sending.package_part_names(package)]
    context = {"preview_messages": list(zip(names, captions, strict=True)), "preview_error": error, "to": chat}
    return render(request, "packages/send_card.html#send-preview", context)


@login_required
@require_GET
def package_send_preview(request, pk: int):
    return _send_preview(request, packages=[_package_or_404(pk)])


@login_required
@require_GET
def collection_send_preview(request, pk: int):
    collection = _collection_or_404(pk)
    return _send_preview(request, packages=selectors.collection_packages(collection=collection), collection=collection)


@login_required
@require_POST
def collection_send(request, pk: int):
    """Send every package of the collection, in order, as one send."""
    collection = _collection_or_404(pk)
    target, error = _send(request, packages=selectors.collection_packages(collection=collection), collection=collection)
    if error:
        context = _collection_context(
            collection, request, send_error=error, send_target=target, send_caption=request.POST.get("caption", "")
        )
        return render(request, COLLECTION, context, status=400)
    return redirect("packages:collection", pk=pk)


def _polled(html: str, context: dict) -> HttpResponse:
    """Polled every 2 s while a send is queued or running; HTTP 286 stops the polling once none is."""
    return HttpResponse(html) if context["sends_live"] else HttpResponseStopPolling(html)


@login_required
@require_GET
def package_sends(request, pk: int):
    package = _package_or_404(pk)
    context = {"sends_url": reverse("packages:sends", args=[pk]), **_sends_context(package=package)}
    return _polled(render_to_string("packages/sends.html", context, request=request), context)


@login_required
@require_GET
def collection_sends(request, pk: int):
    collection = _collection_or_404(pk)
    context = {"sends_url": reverse("packages:collection-sends", args=[pk]), **_sends_context(collection=collection)}
    return _polled(render_to_string("packages/sends.html", context, request=request), context)


@login_required
@require_POST
def package_send_retry(request, pk: int):
    send = get_object_or_404(PackageSend, pk=pk)
    try:
        sending.package_send_retry(send=send)
    except OperatorError as exc:
        messages.error(request, error_text(exc))
    else:
        messages.success(request, f"Trying the unsent parts of send #{send.pk} again.")
    if send.collection_id:
        return redirect("packages:collection", pk=send.collection_id)
    return redirect("packages:detail", pk=send.package_id) if send.package_id else redirect("packages:list")


@login_required
@require_POST
def package_repack_decide(request, pk: int):
    package = _package_or_404(pk)
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

"""Send to Telegram from a package's or a collection's page: the form, its preview, the sends polled while live,
and Retry."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseStopPolling

from accounts.models import Chat, TelegramAccount
from core.errors import OperatorError
from core.forms import error_text
from core.roles import is_operator
from packages import selectors, sending
from packages.models import Collection, Package, PackageSend
from packages.passwords import caption_masked
from packages.views.shared import (
    COLLECTION,
    DETAIL,
    collection_context,
    collection_or_404,
    detail_context,
    package_or_404,
    sends_context,
)


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
    package = package_or_404(pk)
    target, error = _send(request, packages=[package])
    if error:
        context = detail_context(
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
    return _send_preview(request, packages=[package_or_404(pk)])


@login_required
@require_GET
def collection_send_preview(request, pk: int):
    collection = collection_or_404(pk)
    return _send_preview(request, packages=selectors.collection_packages(collection=collection), collection=collection)


@login_required
@require_POST
def collection_send(request, pk: int):
    """Send every package of the collection, in order, as one send."""
    collection = collection_or_404(pk)
    target, error = _send(request, packages=selectors.collection_packages(collection=collection), collection=collection)
    if error:
        context = collection_context(
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
    package = package_or_404(pk)
    context = {"sends_url": reverse("packages:sends", args=[pk]), **sends_context(package=package)}
    return _polled(render_to_string("packages/sends.html", context, request=request), context)


@login_required
@require_GET
def collection_sends(request, pk: int):
    collection = collection_or_404(pk)
    context = {"sends_url": reverse("packages:collection-sends", args=[pk]), **sends_context(collection=collection)}
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

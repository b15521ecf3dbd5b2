"""The Packages page (search over names and archive listings) and one package's detail."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseStopPolling

from accounts.models import Chat, ChatTopic, TelegramAccount
from core.errors import OperatorError
from core.forms import error_text
from core.models import RunStatus
from packages import selectors, sending
from packages.models import Package, PackageSend

PAGE = "packages/list.html"
DETAIL = "packages/detail.html"
PER_PAGE = 25
SENDS_SHOWN = 10
LIVE_SENDS = {RunStatus.QUEUED, RunStatus.RUNNING}


@login_required
@require_GET
@vary_on_headers("HX-Request")  # the same URL answers the whole page or only the results
def package_list(request):
    query = request.GET.get("q", "").strip()
    locked = request.GET.get("locked") == "1"
    found = selectors.package_search(query=query, needs_password=locked)
    packages = Paginator(found, PER_PAGE).get_page(request.GET.get("page"))
    context = {"packages": packages, "query": query, "locked": locked}
    if request.htmx and not request.htmx.history_restore_request:
        return render(request, f"{PAGE}#package-results", context)
    return render(request, PAGE, context)


def _package(pk: int) -> Package:
    try:
        return selectors.package_get(pk=pk)
    except Package.DoesNotExist:
        raise Http404("No such package.") from None


def _send_options(package: Package) -> list[tuple[TelegramAccount, list[tuple[str, str]]]]:
    """Per account that reads the destination: (value, label) of each chat, and each forum topic, it may post in."""
    options = []
    for account, chats in sending.package_send_choices(package=package):
        topics = ChatTopic.objects.filter(chat__in=[chat for chat in chats if chat.is_forum])
        by_chat: dict[int, list[ChatTopic]] = {}
        for topic in topics:
            by_chat.setdefault(topic.chat_id, []).append(topic)
        choices = []
        for chat in chats:
            choices.append((f"{account.pk}:{chat.pk}:", chat.title))
            choices += [
                (f"{account.pk}:{chat.pk}:{t.topic_id}", f"{chat.title} / {t.title}") for t in by_chat.get(chat.pk, [])
            ]
        options.append((account, choices))
    return options


def _detail(request, package: Package, *, send_error: str = "", target: str = "", status: int = 200):
    context = {
        "package": package,
        "folders": selectors.package_folders(package=package),
        "source_topic": package.source_topic_name,
        "dest_parts": list(zip(package.dest_part_names, package.dest_message_ids, strict=False)),
        "send_options": _send_options(package),
        "send_error": send_error,
        "send_target": target,
        **_sends_context(package),
    }
    return render(request, DETAIL, context, status=status)


def _sends_context(package: Package) -> dict:
    sends = list(selectors.package_sends(package=package)[:SENDS_SHOWN])
    return {"package": package, "sends": sends, "sends_live": any(s.status in LIVE_SENDS for s in sends)}


@login_required
@require_GET
def package_detail(request, pk: int):
    return _detail(request, _package(pk))


@login_required
@require_POST
def package_send(request, pk: int):
    """Send to Telegram from the package page; a refusal shows on the form, with the pick kept."""
    package = _package(pk)
    target = request.POST.get("target", "")
    account_id, _, rest = target.partition(":")
    chat_id, _, topic_id = rest.partition(":")
    if not (account_id.isdecimal() and chat_id.isdecimal() and (topic_id == "" or topic_id.isdecimal())):
        return _detail(request, package, send_error="Pick the chat to send to.", target=target, status=400)
    account = TelegramAccount.objects.filter(pk=account_id).first()
    chat = Chat.objects.filter(pk=chat_id).first()
    if account is None or chat is None:
        return _detail(request, package, send_error="That account or chat is gone; pick again.", status=400)
    try:
        send = sending.package_send_create(
            packages=[package], chat=chat, account=account, topic_id=int(topic_id) if topic_id else None
        )
    except (ValidationError, OperatorError) as exc:
        return _detail(request, package, send_error=error_text(exc), target=target, status=400)
    messages.success(request, f"Sending {send.parts_total} part{'s' if send.parts_total != 1 else ''} to {chat.title}.")
    return redirect("packages:detail", pk=package.pk)


@login_required
@require_GET
def package_sends(request, pk: int):
    """Polled every 2 s while a send is queued or running; HTTP 286 stops the polling once none is."""
    context = _sends_context(_package(pk))
    html = render_to_string(f"{DETAIL}#package-sends", context, request=request)
    return HttpResponse(html) if context["sends_live"] else HttpResponseStopPolling(html)


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
    return redirect("packages:detail", pk=send.package_id) if send.package_id else redirect("packages:list")

"""A channel's archive passwords, the card on its page: add one, remove one."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from core.forms import error_text
from ingestion.models import Channel
from packages import services as package_services
from packages.selectors import channel_passwords


def passwords_context(channel: Channel, **extra) -> dict:
    return {"channel": channel, "channel_passwords": channel_passwords(chat_id=channel.chat_id), **extra}


def _passwords_card(request, channel: Channel, **extra) -> HttpResponse:
    if not request.htmx:
        if extra.get("password_error"):
            messages.error(request, extra["password_error"])
        return redirect("ingestion:channel-detail", pk=channel.pk)
    status = 400 if extra.get("password_error") else 200
    return render(request, "ingestion/channel_passwords.html", passwords_context(channel, **extra), status=status)


@login_required
@require_POST
def channel_password_add(request, pk: int):
    channel = get_object_or_404(Channel, pk=pk)
    try:
        package_services.channel_password_add(chat_id=channel.chat_id, password=request.POST.get("password", ""))
    except ValidationError as exc:
        return _passwords_card(request, channel, password_error=error_text(exc))
    return _passwords_card(request, channel, password_notice="Password added; the next archives that need one try it.")


@login_required
@require_POST
def channel_password_remove(request, pk: int, password_pk: int):
    channel = get_object_or_404(Channel, pk=pk)
    try:
        package_services.channel_password_remove(chat_id=channel.chat_id, password_id=password_pk)
    except ValidationError as exc:
        return _passwords_card(request, channel, password_error=error_text(exc))
    return _passwords_card(request, channel, password_notice="Password removed.")

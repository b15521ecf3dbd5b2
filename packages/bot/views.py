from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from core.errors import OperatorError
from core.numbers import whole_number
from packages.bot import demo, selectors, services
from packages.bot.forms import BotSettingsForm
from telegram.errors import TelegramError

PAGE = "bot/page.html"


def _context(form: BotSettingsForm | None = None, *, admin_notice: str = "") -> dict:
    bot = services.bot_settings_get()
    if form is None:
        form = BotSettingsForm(
            initial={
                "enabled": bot.enabled,
                "audience": bot.audience,
                "allowed": " ".join(str(i) for i in bot.allowed_user_ids),
                "sends_per_day": bot.sends_per_day,
                "member_chats": list(bot.member_chats.values_list("pk", flat=True)),
            }
        )
    return {
        "bot": bot,
        "form": form,
        "token_source": services.bot_token_source(),
        "people": selectors.bot_people(),
        "subscriptions": selectors.bot_subscriptions(),
        "deliveries": selectors.bot_deliveries(),
        "activity": selectors.bot_activity(),
        "admin_choices": services.bot_admin_choices(),
        "admin_notice": admin_notice,
        "demo_commands": (
            demo.demo_try_commands(members_only=bot.audience == "members")
            if demo.demo_bot_is_ours(token=services.bot_token())
            else []
        ),
    }


@login_required
def bot_page(request):
    return render(request, PAGE, _context())


@login_required
@require_POST
def bot_settings(request):
    form = BotSettingsForm(request.POST)
    if not form.is_valid():
        return render(request, PAGE, _context(form), status=400)
    data = form.cleaned_data
    services.bot_settings_update(
        enabled=data["enabled"],
        token=data["token"],
        audience=data["audience"],
        allowed_user_ids=data["allowed"],
        sends_per_day=data["sends_per_day"],
        member_chats=list(data["member_chats"]),
    )
    return redirect("bot:page")


@login_required
@require_POST
def bot_person_block(request, user_id: int):
    services.bot_person_block(user_id=user_id, blocked=request.POST.get("blocked") == "1")
    return redirect("bot:page")


@login_required
@require_POST
def bot_make_admin(request):
    chat_id = request.POST.get("chat", "")
    try:
        done = services.bot_make_admin(chat_id=whole_number(chat_id) or 0)
    except (OperatorError, TelegramError) as exc:
        return render(request, PAGE, _context(admin_notice=str(exc)), status=400)
    messages.success(request, done)
    return redirect("bot:page")

from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from packages.bot import selectors, services
from packages.bot.forms import BotSettingsForm

PAGE = "bot/page.html"


def _context(form: BotSettingsForm | None = None) -> dict:
    bot = services.bot_settings_get()
    if form is None:
        form = BotSettingsForm(
            initial={
                "enabled": bot.enabled,
                "audience": bot.audience,
                "allowed": " ".join(str(i) for i in bot.allowed_user_ids),
                "sends_per_day": bot.sends_per_day,
            }
        )
    return {
        "bot": bot,
        "form": form,
        "token_source": "the console" if bot.token_sealed else ("TELEGRAM_BOT_TOKEN" if services.bot_token() else ""),
        "people": selectors.bot_people(),
        "subscriptions": selectors.bot_subscriptions(),
        "deliveries": selectors.bot_deliveries(),
        "activity": selectors.bot_activity(),
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
    )
    return redirect("bot:page")


@login_required
@require_POST
def bot_person_block(request, user_id: int):
    services.bot_person_block(user_id=user_id, blocked=request.POST.get("blocked") == "1")
    return redirect("bot:page")

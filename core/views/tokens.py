"""The Tokens page: each person makes, lists and revokes their own API tokens; operators see everyone's and can
revoke them."""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from core import tokens
from core.errors import OperatorError
from core.forms import ApiTokenForm
from core.models import ApiToken
from core.roles import is_operator

TOKENS_PAGE = "core/tokens.html"


def _token_form(request, data=None) -> ApiTokenForm:
    return ApiTokenForm(
        data,
        operator=is_operator(request.user),
        default_days=settings.API_TOKEN_DEFAULT_DAYS,
        max_days=settings.API_TOKEN_MAX_DAYS,
    )


def _tokens_answer(request, *, form: ApiTokenForm, made: ApiToken | None = None, secret: str = "", status: int = 200):
    context = {
        "form": form,
        "tokens": tokens.api_tokens_visible(user=request.user),
        "made": made,
        "secret": secret,
        "everyone": is_operator(request.user),
    }
    template = f"{TOKENS_PAGE}#tokens-body" if request.htmx else TOKENS_PAGE
    return render(request, template, context, status=status)


@login_required
@require_GET
def token_list(request):
    return _tokens_answer(request, form=_token_form(request))


@login_required
@require_POST
def token_create(request):
    """The secret is in this answer only: a page reload shows the list without it."""
    form = _token_form(request, request.POST)
    if not form.is_valid():
        return _tokens_answer(request, form=form, status=400)
    try:
        made, secret = tokens.api_token_create(owner=request.user, **form.cleaned_data)
    except ValidationError as exc:
        for field_name, messages_ in exc.message_dict.items():
            form.add_error(field_name if field_name in form.fields else None, messages_)
        return _tokens_answer(request, form=form, status=400)
    except OperatorError as exc:
        form.add_error(exc.field, exc.message)
        return _tokens_answer(request, form=form, status=403)
    return _tokens_answer(request, form=_token_form(request), made=made, secret=secret)


@login_required
@require_POST
def token_revoke(request, pk: int):
    token = tokens.api_token_revoke(token=get_object_or_404(tokens.api_tokens_visible(user=request.user), pk=pk))
    if not request.htmx:
        messages.success(request, f"Revoked {token}.")
        return redirect("tokens")
    return _tokens_answer(request, form=_token_form(request))

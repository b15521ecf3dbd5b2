from django import forms

from accounts.models import Chat
from packages.bot import services
from packages.models import BotAudience


def _user_ids(text: str) -> list[int]:
    ids = []
    for word in text.replace(",", " ").split():
        if not word.isdigit():
            raise forms.ValidationError(f"“{word}” is no Telegram user id: ids are numbers, e.g. 7001.")
        ids.append(int(word))
    return sorted(set(ids))


class BotSettingsForm(forms.Form):
    enabled = forms.BooleanField(required=False, label="The bot answers")
    token = forms.CharField(
        required=False,
        strip=True,
        label="Bot token",
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text="From BotFather (123456:ABC…). Left empty, the stored token stays; it is never shown again.",
    )
    audience = forms.ChoiceField(choices=BotAudience.choices, label="Who may use it")
    allowed = forms.CharField(
        required=False,
        label="Allow-list",
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Telegram user ids, separated by spaces or commas (the bot tells a stranger their id).",
    )
    member_chats = forms.ModelMultipleChoiceField(
        queryset=Chat.objects.none(),
        required=False,
        label="Chats whose members may use it",
        help_text="Channels and supergroups of the accounts. The bot asks Telegram whether a person is in one, so "
        "it must be in each (an admin of a channel).",
    )
    sends_per_day = forms.IntegerField(
        min_value=0, max_value=services.SENDS_PER_DAY_MAX, label="Packages per person per day"
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["member_chats"].queryset = Chat.objects.filter(
            pk__in=[chat.pk for chat in services.bot_member_chat_choices()]
        ).order_by("title")

    def clean(self):
        data = super().clean()
        if data.get("audience") == BotAudience.MEMBERS and not data.get("member_chats"):
            self.add_error("member_chats", services.MEMBER_CHATS_MISSING)
        return data

    def clean_token(self) -> str:
        token = self.cleaned_data["token"]
        if token and (problem := services.bot_token_problem(token=token)):
            raise forms.ValidationError(problem)
        return token

    def clean_allowed(self) -> list[int]:
        return _user_ids(self.cleaned_data["allowed"])

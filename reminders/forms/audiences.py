"""The audience page's forms: filters over an account's groups, and a CSV to import."""

from django import forms

from accounts.models import TelegramAccount
from reminders.models import Audience
from reminders.services import AudienceFilter
from reminders.services.audiences import AUDIENCE_CHAT_TYPES

ANY = ""
FORUM_CHOICES = [(ANY, "Forums or not"), ("yes", "Forums only"), ("no", "No forums")]


class AudienceForm(forms.Form):
    account = forms.ModelChoiceField(queryset=TelegramAccount.objects.order_by("phone"), label="Account")
    name = forms.CharField(max_length=200, label="Name")
    title_contains = forms.CharField(max_length=200, required=False, label="Title contains")
    min_members = forms.IntegerField(min_value=0, required=False, label="Members at least")
    max_members = forms.IntegerField(min_value=0, required=False, label="Members at most")
    chat_type = forms.ChoiceField(
        choices=[(ANY, "Groups and supergroups"), *[(kind, kind.title() + "s only") for kind in AUDIENCE_CHAT_TYPES]],
        required=False,
        label="Type",
    )
    forum = forms.ChoiceField(choices=FORUM_CHOICES, required=False, label="Forum")

    def __init__(self, data=None, *, audience: Audience | None = None, **kwargs):
        if audience is not None:
            kwargs["initial"] = {
                "account": audience.account_id,
                "name": audience.name,
                "title_contains": audience.title_contains,
                "min_members": audience.min_members,
                "max_members": audience.max_members,
                "chat_type": audience.chat_type,
                "forum": ANY if audience.forum is None else "yes" if audience.forum else "no",
            }
        super().__init__(data, **kwargs)
        self.audience = audience
        if audience is not None:
            self.fields["account"].disabled = True  # an audience lists one account's groups

    def filters(self) -> AudienceFilter:
        values = self.cleaned_data
        forum = values.get("forum", ANY)
        return AudienceFilter(
            title_contains=values.get("title_contains", ""),
            min_members=values.get("min_members"),
            max_members=values.get("max_members"),
            chat_type=values.get("chat_type", ANY),
            forum=None if forum == ANY else forum == "yes",
        )


class AudienceImportForm(forms.Form):
    account = forms.ModelChoiceField(queryset=TelegramAccount.objects.order_by("phone"), label="Account")
    name = forms.CharField(max_length=200, label="Name")
    file = forms.FileField(
        label="CSV file",
        help_text="One group a line: a chat id, @username or t.me link, then optionally a topic id.",
        widget=forms.ClearableFileInput(attrs={"accept": ".csv,text/csv,text/plain"}),
    )

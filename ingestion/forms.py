"""Operator input for the Channels, Runs and Skipped pages; the services do the checking that needs the data."""

from django import forms

from accounts.models import TelegramAccount
from ingestion.models import SkipReason, StartPoint
from ingestion.rules import KINDS, NAME_PATTERN_MAX, size_exact
from packages.models import RAW_FILE_MAX_RETENTION_DAYS


class ChannelSettingsForm(forms.Form):
    category = forms.CharField(
        label="Category",
        max_length=100,
        required=False,
        widget=forms.TextInput(attrs={"placeholder": "e.g. Miniatures"}),
    )
    # Negative values are refused by channel_update, with the message that says what to use.
    expiration_days = forms.IntegerField(
        label="Keep raw files (days)",
        required=False,
        max_value=RAW_FILE_MAX_RETENTION_DAYS,
        help_text=f"Empty keeps them, 0 keeps 3 hours, at most {RAW_FILE_MAX_RETENTION_DAYS}.",
        widget=forms.NumberInput(attrs={"placeholder": "keep", "inputmode": "numeric"}),
    )
    # Out of range is refused by channel_update, with the message that says what to use.
    sets_per_cycle = forms.IntegerField(label="Sets a cycle", required=False)


class ChannelRulesForm(forms.Form):
    """What a channel takes; sizes and the link are read by the services (ingestion/rules.py), with their errors."""

    take_kinds = forms.MultipleChoiceField(
        label="Kinds taken",
        choices=list(KINDS.items()),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="None ticked takes every kind.",
    )
    take_multi_volume = forms.BooleanField(label="Take sets of several volumes (.001, .part1.rar, …)", required=False)
    leave_extensions = forms.CharField(
        label="Extensions left out",
        required=False,
        max_length=200,
        widget=forms.TextInput(attrs={"placeholder": "e.g. pdf, gcode"}),
    )
    name_pattern = forms.CharField(
        label="Name pattern",
        required=False,
        max_length=NAME_PATTERN_MAX,
        help_text="A regular expression the file name must contain, any case (e.g. dragon|wyrm). Empty: any name.",
        widget=forms.TextInput(attrs={"placeholder": "any name", "spellcheck": "false"}),
    )
    min_bytes = forms.CharField(
        label="Smallest", required=False, widget=forms.TextInput(attrs={"placeholder": "e.g. 1 MB"})
    )
    max_bytes = forms.CharField(
        label="Largest", required=False, widget=forms.TextInput(attrs={"placeholder": "e.g. 500 MB"})
    )
    start_from = forms.ChoiceField(label="Start", choices=StartPoint.choices, widget=forms.RadioSelect)
    start_date = forms.DateField(
        label="Date", required=False, widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d")
    )
    start_message_link = forms.CharField(
        label="Message link",
        required=False,
        max_length=300,
        widget=forms.TextInput(attrs={"placeholder": "https://t.me/c/1234567890/42"}),
    )

    @classmethod
    def of(cls, channel) -> "ChannelRulesForm":
        return cls(
            initial={
                "take_kinds": channel.take_kinds,
                "take_multi_volume": channel.take_multi_volume,
                "leave_extensions": ", ".join(channel.leave_extensions),
                "name_pattern": channel.name_pattern,
                "min_bytes": size_exact(channel.min_bytes),
                "max_bytes": size_exact(channel.max_bytes),
                "start_from": channel.start_from,
                # "now" keeps its moment too, but a date is shown only for a date start.
                "start_date": channel.start_date.date() if channel.start_from == StartPoint.DATE else None,
                "start_message_link": channel.start_message_link,
            }
        )

    def changes(self) -> dict:
        """The cleaned values as channel_rules_update takes them: a date or a link only for its start."""
        changes = dict(self.cleaned_data)
        if changes["start_from"] != StartPoint.DATE:
            changes.pop("start_date")
        if changes["start_from"] != StartPoint.MESSAGE:
            changes.pop("start_message_link")
        return changes


class ChannelActiveForm(forms.Form):
    is_active = forms.BooleanField(required=False)


class TopicFetchForm(forms.Form):
    fetch_enabled = forms.BooleanField(required=False)


def account_label(account: TelegramAccount) -> str:
    return f"{account.display_name} ({account.phone})" if account.display_name else account.phone


class AccountChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj: TelegramAccount) -> str:
        return account_label(obj)


class AccountMultipleChoiceField(forms.ModelMultipleChoiceField):
    def label_from_instance(self, obj: TelegramAccount) -> str:
        return account_label(obj)


class ReaderForm(forms.Form):
    # Whether the account is in the channel is channel_link_account's to say, with a message.
    account = AccountChoiceField(queryset=TelegramAccount.objects.all(), label="Account")


class DestinationForm(forms.Form):
    writers = AccountMultipleChoiceField(
        queryset=TelegramAccount.objects.none(),
        widget=forms.CheckboxSelectMultiple,
        label="Accounts that upload packages here",
        error_messages={"required": "Choose at least one account that uploads the packages."},
    )

    def __init__(self, *args, posters, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["writers"].queryset = TelegramAccount.objects.filter(pk__in=[a.pk for a in posters])


class IngestNowForm(forms.Form):
    account = AccountChoiceField(
        queryset=TelegramAccount.objects.none(),
        required=False,
        empty_label="All accounts",
        label="Account",
        widget=forms.Select(attrs={"class": "select"}),
    )

    def __init__(self, *args, accounts, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["account"].queryset = accounts


class RetryAllForm(forms.Form):
    reason = forms.ChoiceField(
        choices=[("", "All reasons"), *SkipReason.choices],
        required=False,
        label="Reason",
        widget=forms.Select(attrs={"class": "select"}),
    )


class JoinForm(forms.Form):
    # Whether the link leads anywhere is Telegram's to say (services.chat_preview), with a message.
    account = AccountChoiceField(
        queryset=TelegramAccount.objects.none(),
        empty_label=None,
        label="Account",
        widget=forms.Select(attrs={"class": "select"}),
    )
    link = forms.CharField(
        label="@username or invite link",
        max_length=300,
        widget=forms.TextInput(attrs={"placeholder": "@channel or https://t.me/+…"}),
        error_messages={"required": "Paste a @username or a t.me link of the channel or group."},
    )

    def __init__(self, *args, accounts, **kwargs):
        # Its own ids: the Channels page holds several account pickers.
        super().__init__(*args, auto_id="join-%s", **kwargs)
        self.fields["account"].queryset = accounts


class JoinSourcesForm(forms.Form):
    account = AccountChoiceField(
        queryset=TelegramAccount.objects.none(),
        empty_label=None,
        label="Account",
        widget=forms.Select(attrs={"class": "select"}),
    )

    def __init__(self, *args, accounts, **kwargs):
        # Its own ids: the Channels page holds several account pickers.
        super().__init__(*args, auto_id="sources-%s", **kwargs)
        self.fields["account"].queryset = accounts


class CreateDestinationForm(forms.Form):
    account = AccountChoiceField(
        queryset=TelegramAccount.objects.none(),
        empty_label=None,
        label="Created and owned by",
        widget=forms.Select(attrs={"class": "select"}),
    )
    title = forms.CharField(label="Title", max_length=128, error_messages={"required": "Give the new channel a title."})
    about = forms.CharField(label="Description", max_length=255, required=False)
    writers = AccountMultipleChoiceField(
        queryset=TelegramAccount.objects.none(),
        widget=forms.CheckboxSelectMultiple,
        required=False,
        label="Other accounts that upload there (added as admins who post)",
    )

    def __init__(self, *args, accounts, **kwargs):
        # Its own ids: the Channels page holds several account pickers.
        super().__init__(*args, auto_id="create-%s", **kwargs)
        self.fields["account"].queryset = accounts
        self.fields["writers"].queryset = accounts


class LeaveForm(forms.Form):
    account = AccountChoiceField(queryset=TelegramAccount.objects.all(), label="Account")

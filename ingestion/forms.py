"""Operator input for the Channels, Runs and Skipped pages; the services do the checking that needs the data."""

from django import forms

from accounts.models import TelegramAccount
from ingestion.models import SkipReason
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

"""Operator input for the login dialogs; the services do the checking that needs Telegram."""

from django import forms


class PhoneForm(forms.Form):
    phone = forms.CharField(
        label="Phone number",
        max_length=32,
        help_text="International format, e.g. +15550000001. Telegram sends the login code to this account.",
        widget=forms.TextInput(
            attrs={"autocomplete": "off", "autofocus": True, "inputmode": "tel", "placeholder": "+15550000001"}
        ),
    )


class CodeForm(forms.Form):
    code = forms.CharField(
        label="Login code",
        max_length=16,
        help_text="The code Telegram sent to the account (in the Telegram app, or by SMS).",
        widget=forms.TextInput(attrs={"autocomplete": "one-time-code", "autofocus": True, "inputmode": "numeric"}),
    )


class PasswordForm(forms.Form):
    password = forms.CharField(
        label="Two-step verification password",
        help_text="Used once to log in; Stashcast does not store it.",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "off", "autofocus": True}),
    )


class IngestLimitsForm(forms.Form):
    """Hours and a bandwidth cap, as typed; accounts.ingest_limits.ingest_limits_clean checks them together."""

    ingest_start_hour = forms.IntegerField(
        label="Transfers from (hour)",
        min_value=0,
        max_value=23,
        help_text="0–23 on the zone's wall clock. From 0 to 24 is all day; 22 to 6 runs overnight.",
    )
    ingest_end_hour = forms.IntegerField(label="Until (hour)", min_value=1, max_value=24)
    ingest_timezone = forms.CharField(label="Time zone", max_length=64, help_text="An IANA zone: Europe/Berlin, UTC.")
    ingest_bandwidth = forms.CharField(
        label="Bandwidth cap",
        required=False,
        max_length=32,
        help_text='Shared by every download and upload of the account: "2 MB/s", "500 KB/s". Empty: no cap.',
        widget=forms.TextInput(attrs={"placeholder": "no cap", "autocomplete": "off"}),
    )

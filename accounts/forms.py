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

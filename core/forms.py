"""Services' errors (core/errors.py) read for forms and pages: one line of text, or the item a message is about,
without parsing its text."""

from django import forms
from django.core.exceptions import ValidationError

from core.models import Role
from core.tokens import NAME_MISSING


def item_errors(errors: list[ValidationError]) -> list[tuple[int | None, str]]:
    """(index, text) per message of a list field; index None for a message about the whole list."""
    found = []
    for error in errors:
        params = error.params or {}
        if "index" in params:
            found.append((params["index"], params["detail"]))
        else:
            found.extend((None, text) for text in error.messages)
    return found


def error_text(exc: Exception) -> str:
    """A service's error as one line for a notice or the top of a form: a ValidationError's messages joined,
    an OperatorError's (or any other error's) message."""
    if isinstance(exc, ValidationError):
        return " ".join(exc.messages)
    return str(exc)


MOMENT_INPUT = {"type": "datetime-local"}


class AuditFilterForm(forms.Form):
    """The audit page's filters, read by the page and the API alike."""

    actor = forms.CharField(required=False, max_length=200, label="Person or token")
    kind = forms.CharField(required=False, max_length=100, label="Kind")
    object_id = forms.CharField(required=False, max_length=64, label="Object id")
    since = forms.DateTimeField(
        required=False, label="From", widget=forms.DateTimeInput(attrs={"type": "datetime-local"})
    )
    until = forms.DateTimeField(
        required=False, label="Until", widget=forms.DateTimeInput(attrs={"type": "datetime-local"})
    )


class PersonAddForm(forms.Form):
    """The People page's "Add a login": an invite link, or a password shown once."""

    username = forms.CharField(
        required=False,
        max_length=150,
        label="Login name",
        help_text="Needed for a password; for an invite link leave it empty to let the person choose.",
    )
    role = forms.ChoiceField(choices=Role.choices, initial=Role.VIEWER, label="Role")
    expires_in_days = forms.TypedChoiceField(
        choices=[(1, "1 day"), (3, "3 days"), (7, "7 days"), (30, "30 days")],
        coerce=int,
        initial=7,
        label="Link lasts",
    )


class InviteAcceptForm(forms.Form):
    username = forms.CharField(required=False, max_length=150, label="Login name")
    password = forms.CharField(widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}), label="Password")
    password_again = forms.CharField(
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}), label="Password again"
    )

    def clean(self):
        data = super().clean()
        if data.get("password") and data.get("password_again") and data["password"] != data["password_again"]:
            self.add_error("password_again", "The two passwords differ; type the same one twice.")
        return data


class ApiTokenForm(forms.Form):
    """The Tokens page's "Make a token": core.tokens checks it (the scope a viewer may have, the days)."""

    name = forms.CharField(
        max_length=100,
        label="Name",
        help_text="What will use it: backup script, Grafana",
        error_messages={"required": NAME_MISSING},
    )
    scope = forms.ChoiceField(label="Scope", choices=[("read", "Read"), ("write", "Read and write")])
    days = forms.IntegerField(label="Lasts (days)", min_value=1)

    def __init__(self, *args, operator: bool, default_days: int, max_days: int, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["days"].initial = default_days
        self.fields["days"].max_value = max_days
        self.fields["days"].widget.attrs.update(min=1, max=max_days)
        self.fields["days"].help_text = f"At most {max_days}."
        if not operator:
            self.fields["scope"].choices = [("read", "Read")]
            self.fields["scope"].help_text = "Viewers make read tokens only."

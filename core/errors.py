"""The error model: what services raise for an operator to act on.

- Input that cannot be accepted: Django's `ValidationError`, keyed by field (`{"schedule": [...]}`). An item of
  a list field (a reminder's part or target) carries `params={"index": i, "detail": text}` so that a page can
  put the text on that item's row, and the API shows it as "parts[i]: text".
- An action that does not fit the current state: an `OperatorError` (409), optionally naming its field.

core/api/errors.py's exception handler maps them once for the API; core/forms.py once for forms.
"""

from django.core.exceptions import ValidationError


class OperatorError(Exception):
    """A refusal whose message says what to do; `field` names the input it is about (None: the whole action)."""

    status = 409

    def __init__(self, message: str, *, field: str | None = None):
        super().__init__(message)
        self.message = message
        self.field = field


def item_error(field: str, index: int, detail: str) -> ValidationError:
    """A message about one item of a list field: "parts[2]: give a text or a media."."""
    return ValidationError(
        "%(where)s: %(detail)s", params={"where": f"{field}[{index}]", "index": index, "detail": detail}
    )

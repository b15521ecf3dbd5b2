"""The API's one error model: every error answers `{"message": ..., "errors": {field: [...]}}`, the message one a
person can act on; errors raised below the API that are not core's are registered by their owners (apps.py)."""

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from core.errors import OperatorError


def _first_message(detail) -> str:
    if isinstance(detail, dict):
        for field_name, value in detail.items():
            text = _first_message(value)
            return text if field_name in {"non_field_errors", "detail"} else f"{field_name}: {text}"
    if isinstance(detail, list) and detail:
        return _first_message(detail[0])
    return str(detail)


# The API's reading of errors raised below it that are not core's: registered by their owners (apps.py).
_STATUS_OF: dict[type[BaseException], int] = {}


def api_error_status_register(exc_type: type[BaseException], status_code: int) -> None:
    """Answer `exc_type` (and its subclasses) with `status_code` and its message, wherever the API meets it."""
    _STATUS_OF[exc_type] = status_code


def _registered_status(exc: BaseException) -> int | None:
    return next((_STATUS_OF[kind] for kind in type(exc).__mro__ if kind in _STATUS_OF), None)


def exception_handler(exc, context):
    """The one translation of errors into API answers: `{"message": ..., "errors": {field: [...]}}`."""
    if isinstance(exc, DjangoValidationError):
        exc = ValidationError(exc.message_dict if hasattr(exc, "error_dict") else {"non_field_errors": exc.messages})
    elif isinstance(exc, OperatorError):
        extra = {"errors": {exc.field: [exc.message]}} if exc.field else {}
        return error_response(exc.message, status_code=exc.status, **extra)
    elif (status_code := _registered_status(exc)) is not None:
        retry_after = getattr(exc, "retry_after", None)
        if retry_after is None:
            return error_response(str(exc), status_code=status_code)
        response = error_response(str(exc), status_code=status_code, retry_after=retry_after)
        response["Retry-After"] = str(retry_after)
        return response
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, ValidationError):
        response.data = {"message": _first_message(response.data), "errors": response.data}
    elif isinstance(response.data, dict) and "detail" in response.data:
        response.data = {"message": str(response.data["detail"])}
    return response


def error_response(message: str, *, status_code: int = status.HTTP_400_BAD_REQUEST, **extra) -> Response:
    return Response({"message": message, **extra}, status=status_code)


class ErrorSerializer(serializers.Serializer):
    """Every API error: one "Error" component in the schema."""

    message = serializers.CharField(help_text="What went wrong and what to do about it.")
    retry_after = serializers.IntegerField(required=False, help_text="Seconds Telegram asks to wait (429 only).")


BAD_REQUEST = OpenApiResponse(ErrorSerializer, description="Invalid input; `message` says what to change.")

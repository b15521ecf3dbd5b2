"""API errors are JSON with a `message` a person can act on."""

from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler


def _first_message(detail) -> str:
    if isinstance(detail, dict):
        for field_name, value in detail.items():
            text = _first_message(value)
            return text if field_name in {"non_field_errors", "detail"} else f"{field_name}: {text}"
    if isinstance(detail, list) and detail:
        return _first_message(detail[0])
    return str(detail)


def exception_handler(exc, context):
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

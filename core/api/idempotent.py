"""Idempotency-Key on POSTs that start work: a retry with the same key gets the first answer back and starts
nothing (the keys are kept by core.idempotency)."""

import functools
import json

from django.db import transaction
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response

from core.api.errors import error_response
from core.idempotency import (
    KEY_MAX_CHARS,
    idempotency_fingerprint,
    idempotent_request_answer,
    idempotent_request_claim,
)

IDEMPOTENCY_HEADER = "Idempotency-Key"
IDEMPOTENCY_KEY = OpenApiParameter(
    IDEMPOTENCY_HEADER,
    str,
    OpenApiParameter.HEADER,
    required=False,
    description="A string the client picks for this action (a UUID). A retry with the same key, by the same user "
    "on the same endpoint within 24 hours, gets the first successful answer back (header `Idempotent-Replayed: "
    "true`) and starts nothing; the same key with another body is refused (422).",
)


def idempotent(view):
    """For a POST that starts work (a ViewSet action or an APIView method): honours `Idempotency-Key`
    (core.idempotency) and says so in the OpenAPI schema. Put it above the view's @extend_schema."""

    @functools.wraps(view)
    def answer(self, request, *args, **kwargs):
        key = request.headers.get(IDEMPOTENCY_HEADER)
        if key is None:
            return view(self, request, *args, **kwargs)
        if not key.strip() or len(key) > KEY_MAX_CHARS:
            return error_response(f"{IDEMPOTENCY_HEADER} must be 1 to {KEY_MAX_CHARS} characters; a UUID fits.")
        claim = {"user": request.user, "key": key, "endpoint": f"{request.method} {request.path}"[:300]}
        fingerprint = idempotency_fingerprint(request.data)
        with transaction.atomic():
            first = idempotent_request_claim(**claim, fingerprint=fingerprint)
            if first is not None:
                if first.fingerprint != fingerprint:
                    return error_response(
                        f"This {IDEMPOTENCY_HEADER} was sent before with another body on this endpoint; "
                        "use a new key for a new request.",
                        status_code=status.HTTP_422_UNPROCESSABLE_ENTITY,
                    )
                replay = Response(first.answer, status=first.status_code)
                replay["Idempotent-Replayed"] = "true"
                return replay
            response = view(self, request, *args, **kwargs)
            body = json.loads(JSONRenderer().render(response.data)) if response.data is not None else None
            idempotent_request_answer(**claim, status_code=response.status_code, answer=body)
        return response

    # @action's and @extend_schema's settings, copied: the schema below gains the header, the view's stays
    answer.kwargs = dict(getattr(view, "kwargs", {}))
    return extend_schema(parameters=[IDEMPOTENCY_KEY])(answer)

"""Idempotency keys: a client retrying a POST that starts work (after a timeout, a 500, a lost answer) sends the
same `Idempotency-Key` header and gets the first answer back instead of a second run.

The key is claimed in the same transaction as the work it guards, so the stored answer and the work commit
together or not at all: a retry never finds work without its answer, and a concurrent twin waits on the claim
(the unique row) until the first is answered. Only successful answers are kept; a refused request keeps
nothing, so its retry is judged afresh. Keys are kept IDEMPOTENCY_KEEP_HOURS (core.api.idempotent uses them).
"""

import hashlib
import json
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from core.models import IdempotentRequest

KEY_MAX_CHARS = IdempotentRequest._meta.get_field("key").max_length


def idempotency_fingerprint(data) -> str:
    """The request body's hash, whatever parser read it (files by their names)."""
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()


def idempotent_request_claim(*, user, key: str, endpoint: str, fingerprint: str) -> IdempotentRequest | None:
    """Call inside the transaction doing the work: None when this request is the first with its key (the work
    goes on, then idempotent_request_answer), else the first request's row, once that one has committed."""
    expired = timezone.now() - timedelta(hours=settings.IDEMPOTENCY_KEEP_HOURS)
    IdempotentRequest.objects.filter(user=user, key=key, endpoint=endpoint, created_at__lt=expired).delete()
    try:
        with transaction.atomic():
            IdempotentRequest.objects.create(user=user, key=key, endpoint=endpoint, fingerprint=fingerprint)
    except IntegrityError:
        return IdempotentRequest.objects.get(user=user, key=key, endpoint=endpoint)
    return None


def idempotent_request_answer(*, user, key: str, endpoint: str, status_code: int, answer) -> None:
    """Keep the first request's answer for its retries; a refusal (not 2xx) keeps nothing."""
    claimed = IdempotentRequest.objects.filter(user=user, key=key, endpoint=endpoint)
    if 200 <= status_code < 300:
        claimed.update(status_code=status_code, answer=answer)
    else:
        claimed.delete()


def idempotent_requests_purge(*, older_than: timedelta) -> int:
    return IdempotentRequest.objects.filter(created_at__lt=timezone.now() - older_than).delete()[0]

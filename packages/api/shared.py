"""What the packages API's modules share: the error answers of its schema, the id field and a preview's link."""

from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers

from core.api import BAD_REQUEST, ErrorSerializer
from core.numbers import BIGINT_MAX

ERRORS = {
    400: BAD_REQUEST,
    409: OpenApiResponse(ErrorSerializer, description="The action does not fit the current state."),
}


def id_field(**options) -> serializers.IntegerField:
    # Ids are PostgreSQL bigints: a larger number is refused as input, not by the database.
    return serializers.IntegerField(min_value=1, max_value=BIGINT_MAX, **options)


def preview_url(package_id: int, preview_id: int | None) -> str | None:
    if preview_id is None:
        return None
    return reverse("packages:preview-image", args=[package_id, preview_id])

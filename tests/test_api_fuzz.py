"""The API fuzzed against its own OpenAPI schema: no 5xx, responses match the schema."""

import pytest
import schemathesis
from django.contrib.auth import get_user_model
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings
from rest_framework.authtoken.models import Token
from schemathesis.checks import content_type_conformance, not_a_server_error, response_schema_conformance

from config.wsgi import application
from tests.ingestion.conftest import run_cycle, world


def _schema():
    import django

    django.setup()
    return SchemaGenerator().get_schema(request=None, public=True)


schema = schemathesis.openapi.from_dict(_schema())
schema.app = application
# The token endpoint is throttled and takes passwords: it has tests of its own.
schema = schema.exclude(path="/api/auth/token/")


@pytest.fixture
def same_connection():
    """Like Django's test client: requests must not close the test's database connection."""
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def operator_token(ingest_world, settings, tmp_path, same_connection):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.INGEST_STAGING_DIR = tmp_path / "staging"
    messages = [
        {"id": 7, "document": {"name": "a.zip", "archive": [{"path": "a/b.stl", "size": 5}]}},
        {"id": 9, "document": {"name": "v.part1.rar", "size": 50, "seed": 1}},
    ]
    ingest_world(world(messages=messages))
    run_cycle()
    user = get_user_model().objects.create_superuser("fuzzer", password="x")
    return Token.objects.create(user=user).key


@pytest.mark.django_db
@schema.parametrize()
@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.filter_too_much],
)
def test_api_answers_within_its_schema(case, operator_token):
    case.call_and_validate(
        headers={"Authorization": f"Token {operator_token}"},
        checks=[not_a_server_error, content_type_conformance, response_schema_conformance],
    )

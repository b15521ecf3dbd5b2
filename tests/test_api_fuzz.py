"""The API fuzzed against its own OpenAPI schema.

Valid data (positive): no 5xx and responses match the schema. Invalid data (negative: wrong types, values
out of range, missing fields, bodies of other content types, plus the coverage phase's boundary values):
no 5xx, and every 4xx is JSON with a `message`. Each run is bounded: a few examples per operation.
"""

import pytest
import schemathesis
from django.contrib.auth import get_user_model
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings
from schemathesis.checks import content_type_conformance, not_a_server_error, response_schema_conformance
from schemathesis.config import SchemathesisConfig

from config.wsgi import application
from core.tokens import api_token_create
from tests.support.ingestion import run_cycle, world, world_authorize_load


def _schema():
    import django

    django.setup()
    return SchemaGenerator().get_schema(request=None, public=True)


def _loaded(config: SchemathesisConfig | None = None):
    loaded = schemathesis.openapi.from_dict(_schema(), config=config)
    loaded.app = application
    # The token endpoint is throttled and takes passwords: it has tests of its own.
    return loaded.exclude(path="/api/auth/token/")


# Bench-sized: the whole API fuzzed, a few examples per operation; `make test` runs it, `make test-fast` leaves it out.
pytestmark = pytest.mark.large

schema = _loaded()
negative_schema = _loaded(
    SchemathesisConfig.from_dict({"generation": {"mode": "negative"}, "phases": {"coverage": {"enabled": True}}})
)


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


def build_once() -> str:
    """An ingested world and an operator's token, built once for the module's tests (tests/support/once.py):
    every test starts from them, and what its requests change goes with it."""
    messages = [
        {"id": 7, "document": {"name": "a.zip", "archive": [{"path": "a/b.stl", "size": 5}]}},
        {"id": 9, "document": {"name": "v.part1.rar", "size": 50, "seed": 1}},
    ]
    world_authorize_load(world(messages=messages))
    run_cycle()
    user = get_user_model().objects.create_superuser("fuzzer", password="x")
    return api_token_create(owner=user, name="fuzzer", scope="write")[1]


@pytest.fixture
def operator_token(built_copy, same_connection) -> str:
    return built_copy


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


def errors_say_what_to_do(ctx, response, case):
    """Every refusal is JSON with a message a person can act on (not an HTML page)."""
    if 400 <= response.status_code < 500:
        content_type = response.headers.get("content-type", [""])[0]
        assert "application/json" in content_type, f"{response.status_code} answered {content_type}, not JSON"
        assert str(response.json().get("message", "")).strip(), f"{response.status_code} has no message"


@pytest.mark.django_db
@negative_schema.parametrize()
@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.filter_too_much],
)
def test_api_refuses_invalid_data_without_a_server_error(case, operator_token):
    case.call_and_validate(
        headers={"Authorization": f"Token {operator_token}"}, checks=[not_a_server_error, errors_say_what_to_do]
    )

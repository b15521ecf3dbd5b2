"""The admin's add forms, posted empty: each says what is missing (or offers no form), never a 500."""

import pytest
from django.contrib import admin
from django.urls import reverse

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "model", sorted(admin.site._registry, key=lambda model: model._meta.label), ids=lambda model: model._meta.label
)
def test_an_empty_add_form_is_refused_in_words(admin_client, model):
    url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_add")

    answer = admin_client.post(url, {})

    assert answer.status_code in {200, 403}, f"{url}: {answer.status_code}"
    if answer.status_code == 200:
        assert "errornote" in answer.content.decode() or "This field is required" in answer.content.decode()

import pytest


@pytest.fixture(autouse=True)
def files_in_tmp(storage):
    """Ingestion downloads and keeps files: each test in its own folder."""

import pytest

from tests.support.accounts import WORLD


@pytest.fixture
def world(sandbox):
    return sandbox(WORLD)

import pytest

from tests.accounts.world import WORLD


@pytest.fixture
def world(sandbox):
    return sandbox(WORLD)

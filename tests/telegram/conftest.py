import pytest


@pytest.fixture
def sandbox_clock(monkeypatch):
    """Set the sandbox server's clock: sandbox_clock(timestamp) (file references, slow mode, new posts)."""

    def set_to(timestamp: float) -> None:
        monkeypatch.setattr("telegram.sandbox.world.clock", lambda: timestamp)

    return set_to

import pytest


@pytest.fixture
def sandbox(settings, tmp_path):
    """Load a sandbox world (DESIGN.md world format v1) into a fresh folder.

    Usage: world = sandbox({"accounts": [...], "chats": [...]}).
    """
    from telegram.sandbox.world import World, world_load

    settings.SANDBOX_PATH = tmp_path / "sandbox"

    def load(data: dict) -> World:
        world_load(settings.SANDBOX_PATH, data)
        return World(settings.SANDBOX_PATH)

    return load

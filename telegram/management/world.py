"""The sandbox world as the `sandbox_*` commands open it."""

from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.core.management.base import CommandError

from telegram.sandbox.world import World, WorldError


@contextmanager
def sandbox_world_open() -> Iterator[World]:
    """The world of SANDBOX_PATH, closed after; what it refuses (no world loaded, no such chat) is a CommandError
    with the world's words."""
    try:
        world = World(settings.SANDBOX_PATH)
    except WorldError as exc:
        raise CommandError(str(exc)) from None
    try:
        yield world
    except WorldError as exc:
        raise CommandError(str(exc)) from None
    finally:
        world.close()

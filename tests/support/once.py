"""Data built once for a module's tests, where building it costs far more than the tests that read it (an
ingested world: tens of seconds).

The database part is built in a transaction left open while the module's tests run and rolled back after its
last one; each test runs inside it in a savepoint of its own (pytest-django's), so what a test writes to the
database goes with it, as with Django's `setUpTestData`. The files (the sandbox world, kept and staged files)
are built in one folder, and every test works on its own copy of it (`built_copy_use`).

Once built, the data is in the database of every later test of the module, whether it asks for it or not: use
this only in a module whose database tests can all start from what was built (a test that needs another world goes
in a module of its own). Not for a module with transactional tests or tests that restart PostgreSQL: the open
transaction would not survive them.

Usage: a test module defines `build_once()` and its tests take the `built_copy` fixture (tests/conftest.py),
which is what `build_once()` returned; the files are this test's own copy.
"""

import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.db import transaction
from django.test import override_settings


@dataclass(frozen=True)
class Built:
    folder: Path
    value: Any


def _folders(folder: Path) -> dict[str, Path]:
    return {
        "SANDBOX_PATH": folder / "sandbox",
        "MEDIA_ROOT": folder / "media",
        "INGEST_STAGING_DIR": folder / "staging",
    }


def built_once(*, blocker, folder: Path, build: Callable[[], Any]) -> Iterator[Built]:
    """Run `build()` with the sandbox and files in `folder` in a transaction that stays open until the
    generator is closed, then is rolled back. Database access is allowed only while building and rolling back:
    the tests themselves ask for it as usual."""
    with override_settings(**_folders(folder)):
        with blocker.unblock():
            block = transaction.atomic()
            block.__enter__()
            try:
                value = build()
            except BaseException as error:
                block.__exit__(type(error), error, error.__traceback__)
                raise
        try:
            yield Built(folder=folder, value=value)
        finally:
            with blocker.unblock():
                transaction.set_rollback(True)
                block.__exit__(None, None, None)


def built_copy_use(built: Built, *, target: Path, settings) -> None:
    """Point this test (through pytest-django's `settings`) at its own copy of what was built in files: the
    sandbox world it changes by reading (sessions) or writing, the kept and staged files."""
    shutil.copytree(built.folder, target)
    for name, path in _folders(target).items():
        setattr(settings, name, path)

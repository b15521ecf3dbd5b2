"""Typed environment helpers that fail loudly on a bad value."""

import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

TRUE_VALUES = {"true", "1", "yes", "on"}
FALSE_VALUES = {"false", "0", "no", "off"}


def envbool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    value = raw.strip().lower()
    if value in TRUE_VALUES:
        return True
    if value in FALSE_VALUES:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean; use true or false.")


def envint(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a whole number.") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={value} must be at least {minimum}.")
    return value


def envstr(name: str, default: str | None = None) -> str:
    value = os.environ.get(name)
    if value is None or value == "":
        if default is None:
            raise ImproperlyConfigured(f"{name} must be set.")
        return default
    return value


def envlist(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def read_env_file(path: Path) -> dict[str, str]:
    if not path.exists():
        return {}
    values = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        values[key.strip()] = value.strip()
    return values


def write_env_file(path: Path, values: dict[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{key}={value}\n" for key, value in values.items()))


def var_dir(root: Path) -> Path:
    """Where the local stack keeps its data: <root>/var, or STASHCAST_VAR_DIR."""
    custom = os.environ.get("STASHCAST_VAR_DIR", "").strip()
    return Path(custom).expanduser().absolute() if custom else root / "var"


def load_local_stack(root: Path) -> None:
    """Let any process on this machine talk to the stack `make run` started.

    Variables already set win; stack.env exists only while the stack runs. `make test`
    sets STASHCAST_IGNORE_STACK_ENV so tests never pick up a running stack's folders.
    """
    if envbool("STASHCAST_ENV_COMPLETE", False):
        return  # `make run` built each process's environment: a secret left out must not come back from a file
    var = var_dir(root)
    paths = [var / "secret.env"]
    if not envbool("STASHCAST_IGNORE_STACK_ENV", False):
        paths.append(var / "stack.env")
    for path in paths:
        for key, value in read_env_file(path).items():
            os.environ.setdefault(key, value)

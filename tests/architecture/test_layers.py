"""The layer rule (docs/architecture.md), checked on every module so that it stays true.

Between packages, arrows only point down:  operations → reminders, ingestion → packages → accounts → telegram → core
(config, above everything, wires them). Inside an app: views/api/urls/forms/tasks/admin/commands → services,
selectors and the other logic modules → models. Every import counts, function-local ones too.
"""

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Lower rank: lower layer. Equal ranks may not import each other.
RANK = {"core": 0, "telegram": 1, "accounts": 2, "packages": 3, "ingestion": 4, "reminders": 4, "operations": 5}
TOP = {"views", "api", "urls", "forms", "tasks", "admin", "apps", "management", "templatetags", "presenters"}


def _modules() -> list[str]:
    names = []
    for package in RANK:
        names.append(package)
        for info in pkgutil.walk_packages([str(ROOT / package)], prefix=f"{package}."):
            if ".migrations" not in info.name:
                names.append(info.name)
    return sorted(names)


MODULES = _modules()
KNOWN = set(MODULES)


def _imports(module: str) -> set[str]:
    spec = importlib.util.find_spec(module)
    tree = ast.parse(Path(spec.origin).read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in found if name.split(".")[0] in RANK}


def _layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "package"
    return "top" if parts[1] in TOP else ("models" if parts[1] == "models" else "logic")


def _existing(name: str) -> str | None:
    """The module an imported name lives in ("reminders.services.ReminderSpec" → "reminders.services")."""
    while name:
        if name in KNOWN:
            return name
        name = name.rpartition(".")[0]
    return None


def _violation(importer: str, imported: str) -> str | None:
    source, target = importer.split(".")[0], imported.split(".")[0]
    if source != target:
        if RANK[target] >= RANK[source]:
            return f"{importer} imports {imported}: {target} is not below {source}"
        # core's API and forms (the error handler, the Error schema) are shared primitives like the rest of core.
        if source != "operations" and target not in {"core", "telegram"} and _layer(imported) == "top":
            return f"{importer} imports {imported}: another app's views, API, forms or tasks"
        return None
    order = {"models": 0, "logic": 1, "top": 2, "package": 2}
    if order[_layer(imported)] > order[_layer(importer)]:
        return f"{importer} imports {imported}: a layer above it in {source}"
    return None


@pytest.mark.parametrize("module", MODULES)
def test_every_module_imports(module):
    importlib.import_module(module)


def test_imports_only_point_down():
    problems = set()
    for module in MODULES:
        for name in _imports(module):
            imported = _existing(name)
            # "from core import clock" names the package too; its modules are what count.
            if imported in {None, module, imported.split(".")[0] if imported else None}:
                continue
            if problem := _violation(module, imported):
                problems.add(problem)
    assert not problems, "imports against the layer rule:\n" + "\n".join(sorted(problems))

"""The tests' own tree: one toolbox (tests/support/) that every test may import; test modules and conftests are
never imported, so a fixture is only ever a fixture (taken by its name), and a helper has one home.

Every import counts, function-local ones too; `tests.claimtest` is a Django app of the tests, imported as such.
"""

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
ALLOWED = ("tests.support", "tests.claimtest")


def _imported_modules(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from tests import x` imports the module tests.x
            names = [f"{node.module}.{alias.name}" for alias in node.names] if node.module == "tests" else [node.module]
            found += [(node.lineno, name) for name in names]
        elif isinstance(node, ast.ImportFrom) and node.level:
            found.append((node.lineno, "." * node.level + (node.module or "")))
    return found


def _outside_the_toolbox(name: str) -> bool:
    if name.startswith("."):
        return True  # relative imports hide what they import
    if name != "tests" and not name.startswith("tests."):
        return False
    return not any(name == allowed or name.startswith(f"{allowed}.") for allowed in ALLOWED)


def test_tests_import_helpers_from_tests_support_only():
    wrong = [
        f"{path.relative_to(TESTS.parent)}:{line} imports {name}"
        for path in sorted(TESTS.rglob("*.py"))
        for line, name in _imported_modules(path)
        if _outside_the_toolbox(name)
    ]

    assert not wrong, "move the helper to tests/support/ (a fixture: to a conftest, taken by name):\n" + "\n".join(
        wrong
    )


def test_the_toolbox_holds_no_tests_and_no_fixtures():
    found = []
    for path in sorted((TESTS / "support").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                found.append(f"{path.name}: test {node.name}")
            decorators = [ast.unparse(decorator) for decorator in getattr(node, "decorator_list", [])]
            if any(decorator.startswith(("pytest.fixture", "fixture")) for decorator in decorators):
                found.append(f"{path.name}: fixture {node.name}")

    assert not found, "tests/support/ is imported, not collected: tests and fixtures belong elsewhere\n" + "\n".join(
        found
    )


def test_the_check_sees_a_test_module_imported_from_another(tmp_path):
    module = tmp_path / "test_example.py"
    module.write_text(
        "from tests.reminders.test_pages import compose\n"
        "from tests import factories\n"
        "def helper():\n"
        "    from tests.reminders.conftest import at\n"
        "from tests.support.reminders import SENDER\n"
        "from .conftest import x\n"
    )

    flagged = [name for _, name in _imported_modules(module) if _outside_the_toolbox(name)]

    assert flagged == ["tests.reminders.test_pages", "tests.factories", ".conftest", "tests.reminders.conftest"]

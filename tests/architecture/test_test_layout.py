"""The suite's own layout: helpers live in tests/support, conftests hold fixtures, nothing imports a
conftest or a test module, and every access.toml text is one named posture."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
PYTHON_FILES = sorted(p for p in TESTS.rglob("*.py") if "__pycache__" not in p.parts)


def package_of(path: Path) -> tuple[str, ...]:
    return path.relative_to(TESTS.parent).with_suffix("").parts[:-1]


def imported_modules(source: str, package: tuple[str, ...]) -> list[str]:
    """Every module ``source`` imports, relative imports resolved against ``package``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else ()
            module = ".".join((*base, *(node.module.split(".") if node.module else ())))
            found.append(module)
            # ``from tests.timeline import conftest`` names the module in the alias, not the module.
            found += [f"{module}.{alias.name}" for alias in node.names]
    return found


def is_conftest_or_test_module(module: str) -> bool:
    last = module.rsplit(".", 1)[-1]
    return module.startswith("tests") and (last == "conftest" or last.startswith("test_"))


def test_the_layout_check_sees_every_kind_of_import():
    source = "from .conftest import envelope\nfrom tests.rpc import test_cursor_walk\nimport tests.views.conftest\n"
    modules = imported_modules(source, ("tests", "timeline"))
    assert [m for m in modules if is_conftest_or_test_module(m)] == [
        "tests.timeline.conftest", "tests.rpc.test_cursor_walk", "tests.views.conftest",
    ]


@pytest.mark.parametrize("path", PYTHON_FILES, ids=lambda p: str(p.relative_to(TESTS)))
def test_no_file_imports_from_a_conftest_or_a_test_module(path):
    modules = imported_modules(path.read_text(encoding="utf-8"), package_of(path))
    offending = [m for m in modules if is_conftest_or_test_module(m)]
    assert offending == [], f"{path.relative_to(TESTS)} imports {offending}: move the helper to tests/support"


def test_support_modules_define_no_fixtures():
    for path in (TESTS / "support").glob("*.py"):
        assert "pytest.fixture" not in path.read_text(encoding="utf-8"), path.name


def test_every_access_toml_text_is_a_posture_in_tests_support_postures():
    # A posture's text starts its own line with ``enabled = ``; parser-error inputs are one-liners.
    postures = TESTS / "support" / "postures.py"
    holders = [
        str(path.relative_to(TESTS))
        for path in PYTHON_FILES
        if path != postures
        and any(line.startswith("enabled = ") for line in path.read_text(encoding="utf-8").splitlines())
    ]
    assert holders == []

"""The dependency rules of the layout (README "Architecture"), checked on the source itself.

Transports (JSON-RPC, pages, timeline, shell) depend on the memory domain, never the reverse:
nothing under ``memory_panel`` imports ``mobkit_console`` except its access API, a leaf. And no
two modules of the project import each other, directly or round a longer loop — type-only
imports included, since a reader following names meets them all the same.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("memory_panel", "mobkit_console")
ACCESS_API = "mobkit_console.access"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {
        _module_name(path): path
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if "migrations" not in path.parts
    }


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """Project modules ``name`` imports anywhere in its source (module level, functions, TYPE_CHECKING)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # ``from pkg import mod`` depends on pkg.mod when that is a module, else on pkg.
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]
        else:
            continue
        found.update(t for t in targets if t.split(".")[0] in PACKAGES and t != name)
    return found


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def test_the_layout_has_the_modules_this_test_reasons_about():
    # A rename that left this test checking nothing would pass silently; these must exist.
    for name in ("memory_panel.errors", "memory_panel.visibility", "memory_panel.cursor", "mobkit_console.rpc.views"):
        assert name in GRAPH


@pytest.mark.parametrize("name", sorted(n for n in GRAPH if n.startswith("memory_panel")))
def test_memory_panel_imports_no_transport(name):
    outside = {t for t in GRAPH[name] if t.startswith("mobkit_console") and not t.startswith(ACCESS_API)}
    assert not outside, f"{name} imports {sorted(outside)}"


def test_the_access_api_is_a_leaf():
    for name, targets in GRAPH.items():
        if name.startswith(ACCESS_API):
            assert all(t.startswith(ACCESS_API) for t in targets), f"{name} imports {sorted(targets)}"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in graph:
                continue
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycles():
    assert _cycles(GRAPH) == []


def test_the_cycle_check_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]

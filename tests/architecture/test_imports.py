"""The dependency rules of the layout (README "Architecture"), checked on the source itself.

The project's packages form layers, each importing only the layers below it:

    access          the access-control engine and the caller's grants (a leaf: no project import)
    memory_panel    the memory domain: realm files, selectors, wire format, panels
    mobkit_console  the transports and the project: JSON-RPC, timeline, sign-in, settings, shell

So transports depend on the memory domain, never the reverse. And no two modules of the project
import each other, directly or round a longer loop — type-only imports included, since a reader
following names meets them all the same.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Lowest first: a module may import its own package and the packages before it.
LAYERS = ("access", "memory_panel", "mobkit_console")
PACKAGES = LAYERS


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
    for name in ("access.engine", "memory_panel.errors", "memory_panel.visibility", "memory_panel.cursor", "mobkit_console.rpc.views"):
        assert name in GRAPH


def _layer(module: str) -> int:
    return LAYERS.index(module.split(".")[0])


@pytest.mark.parametrize("name", sorted(GRAPH))
def test_modules_import_only_their_own_layer_and_the_layers_below(name):
    upward = sorted(t for t in GRAPH[name] if _layer(t) > _layer(name))
    assert not upward, f"{name} imports {upward}, above its layer ({LAYERS[_layer(name)]})"


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

"""The app's modules import one way: no import cycle, and no deferred import left to hide one.

Walks every module of `graph_memory` (their source, not the import system, so
a cycle that only works thanks to import order is still found) and follows
module-level `import` statements between them. Imports inside functions are
counted as edges too: a deferred import whose only reason is a cycle is
still a cycle.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import graph_memory

PACKAGE_DIR = Path(graph_memory.__file__).resolve().parent
# Deferred on purpose, and not part of any cycle: heavy optional dependencies
# loaded only when used (torch through the local embedder).
TYPE_CHECKING_ONLY = "TYPE_CHECKING"


def _module_name(path: Path) -> str:
    parts = ["graph_memory", *path.relative_to(PACKAGE_DIR).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {
        _module_name(path): path
        for path in PACKAGE_DIR.rglob("*.py")
        if "migrations" not in path.parts and "management" not in path.parts
    }


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The graph_memory modules `name` imports (an `import a.b` of a package also runs `a`)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and TYPE_CHECKING_ONLY in ast.unparse(node.test):
            node.body = []  # typing-only imports never run
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package.split(".")[: len(package.split(".")) - node.level + 1], base]).strip(".")
            targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
            # Importing a.b.c runs the packages a.b first, unless the importer lives inside them.
            parent = target.rpartition(".")[0]
            while parent and parent not in ("graph_memory", name) and not name.startswith(parent + "."):
                found.add(parent)
                parent = parent.rpartition(".")[0]
    return found


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_import_graph_of_graph_memory_has_no_cycle() -> None:
    modules = _modules()
    known = set(modules)
    graph = {name: _imports(name, path, known) for name, path in modules.items()}
    cycle = _cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_checker_finds_a_planted_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_services_imports_after_setup() -> None:
    services = importlib.import_module("graph_memory.services")
    assert callable(services.node_brief) and callable(services.summarize_case)

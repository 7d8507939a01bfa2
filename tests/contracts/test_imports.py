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


BELOW_THE_FACES = ("wall", "viewer", "map", "vectors", "summaries", "refresh", "documents", "lint", "ledger", "consent",
                   "plumbing", "models", "adapter", "conf", "services", "signals", "receivers", "tasks", "checks")
# The house's layers (README, "The house"). Each rule: (what it says, importers, forbidden targets, allowed targets).
# A module matches a folder when it is the folder's package or inside it.
LAYERS = [
    (
        "what the memory builds (the map, vectors, summaries, their refresh) never asks who is looking",
        ("graph_memory.map", "graph_memory.vectors", "graph_memory.summaries", "graph_memory.refresh"),
        ("graph_memory.wall", "graph_memory.viewer"),
        (),
    ),
    (
        "the wall decides what a viewer may open and never depends on a read built on it",
        ("graph_memory.wall",),
        ("graph_memory.viewer", "graph_memory.api", "graph_memory.admin", "graph_memory.services"),
        (),
    ),
    (
        "the lint pass audits stored rows; it never serves a viewer's read",
        ("graph_memory.lint",),
        ("graph_memory.viewer",),
        (),
    ),
    (
        "a viewer's read reaches the refresh only through its entries for one case (a summary written on demand, "
        "a case flagged by a filed note), never the nightly run",
        ("graph_memory.viewer",),
        ("graph_memory.refresh",),
        ("graph_memory.refresh.on_demand", "graph_memory.refresh.marking"),
    ),
    (
        "the faces (the API with MCP, Django admin) sit on top: nothing below imports them",
        tuple(f"graph_memory.{name}" for name in BELOW_THE_FACES),
        ("graph_memory.api", "graph_memory.admin"),
        (),
    ),
    (
        "the faces (the API with MCP, Django admin) reach a viewer's reads through services only",
        ("graph_memory.api", "graph_memory.admin"),
        ("graph_memory.viewer",),
        (),
    ),
]


def _inside(module: str, folders: tuple[str, ...]) -> bool:
    return any(module == folder or module.startswith(folder + ".") for folder in folders)


def _breaches(graph: dict[str, set[str]]) -> list[str]:
    found = []
    for rule, importers, forbidden, allowed in LAYERS:
        for module in sorted(graph):
            if not _inside(module, importers):
                continue
            for target in sorted(graph[module]):
                # An allowed module's package runs first (an edge of its own in the graph): not a choice of the importer.
                ancestor = any(a.startswith(target + ".") for a in allowed)
                if _inside(target, forbidden) and not _inside(target, (*allowed, *importers)) and not ancestor:
                    found.append(f"{module} imports {target}: {rule}")
    return found


def test_each_layer_imports_only_what_is_below_it() -> None:
    modules = _modules()
    known = set(modules)
    graph = {name: _imports(name, path, known) for name, path in modules.items()}
    breaches = _breaches(graph)
    assert breaches == [], "\n".join(breaches)


def test_the_layer_checker_names_the_rule_a_planted_import_breaks() -> None:
    planted = {"graph_memory.map.graph": {"graph_memory.wall.access"}, "graph_memory.viewer.search": {"graph_memory.refresh.nightly"}}
    breaches = _breaches(planted)
    assert breaches[0].startswith("graph_memory.map.graph imports graph_memory.wall.access: what the memory builds")
    assert "never the nightly run" in breaches[1]
    assert _breaches({"graph_memory.viewer.briefs": {"graph_memory.refresh.on_demand"}}) == []


def _public_functions(module: str, path: Path) -> list[ast.FunctionDef]:
    tree = ast.parse(path.read_text(), filename=str(path))
    return [node for node in tree.body if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")]


def _parameters(function: ast.FunctionDef) -> list[str]:
    args = function.args
    return [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]


def test_reads_take_the_viewer_and_what_is_built_never_does() -> None:
    modules = _modules()
    wrong = []
    for module, path in sorted(modules.items()):
        for function in _public_functions(module, path):
            takes = bool({"viewer", "scope"} & set(_parameters(function)))
            if _inside(module, ("graph_memory.viewer",)) and not takes:
                wrong.append(f"{module}.{function.name} is a read without `viewer=` (or the `scope` decided from one)")
            if _inside(module, LAYERS[0][1]) and takes:
                wrong.append(f"{module}.{function.name} takes a viewer, but what the memory builds never asks who looks")
    assert wrong == [], "\n".join(wrong)

"""MkDocs hooks (mkdocs.yml `hooks:`): the pages that quote code take it from the code.

- A line `--8<-- "path/to/file.py:Name.method"` (inside a fenced block) becomes the source of
  that class, function or method, read from the file at build time: the host developers'
  tutorial shows the worked-example adapter as it is, and a name that no longer exists fails
  the build rather than showing stale code.
- docs/settings.md must match graph_memory/conf.py (docs/settings_reference.py writes it).
"""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
import textwrap
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

ROOT = Path(__file__).resolve().parent.parent
INCLUDE = re.compile(r'^(?P<indent>[ \t]*)--8<-- "(?P<path>[^":]+):(?P<name>[\w.]+)"[ \t]*$', re.M)


def _defines(node: ast.stmt, name: str) -> bool:
    if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
        return node.name == name
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
    return any(isinstance(t, ast.Name) and t.id == name for t in targets)


def definition_source(path: str, name: str) -> str:
    """The dedented source of the class, function, method or assignment `name` ("Class.method",
    "Class.attribute") in `path` (from the repository root).

    Comment lines right above it come along (they say why); a decorator does too.
    """
    file = ROOT / path
    if not file.is_file():
        raise LookupError(f"{path}: no such file")
    source = file.read_text()
    scope: list[ast.stmt] = ast.parse(source).body
    node: ast.stmt | None = None
    for part in name.split("."):
        node = next((n for n in scope if _defines(n, part)), None)
        if node is None:
            raise LookupError(f"{path} defines no {name}")
        scope = getattr(node, "body", [])
    assert node is not None and node.end_lineno is not None
    lines = source.splitlines()
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) - 1
    while first > 0 and lines[first - 1].strip().startswith("#"):
        first -= 1
    return textwrap.dedent("\n".join(lines[first : node.end_lineno]))


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    def include(match: re.Match[str]) -> str:
        try:
            code = definition_source(match["path"], match["name"])
        except LookupError as exc:
            raise PluginError(f"{page.file.src_path}: {exc}") from exc
        return textwrap.indent(code, match["indent"])

    return INCLUDE.sub(include, markdown)


def on_pre_build(config: Any) -> None:
    spec = importlib.util.spec_from_file_location("settings_reference", ROOT / "docs" / "settings_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    if not module.PAGE.exists() or module.PAGE.read_text() != module.render():
        raise PluginError("docs/settings.md is out of date with graph_memory/conf.py: run `make docs-settings`")

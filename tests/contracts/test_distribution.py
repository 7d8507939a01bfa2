"""The distribution a host installs: the wheel holds every file of the package, says what it needs, and the
package names no host (the hosts' suites then run against this wheel installed: tests/installed_hosts.py)."""

from __future__ import annotations

import ast
import email
import re
import zipfile
from collections.abc import Iterator

import pytest

from tests.installed_hosts import ROOT, build_wheel

PACKAGE = ROOT / "graph_memory"
# The reference host, the reference project and the tests: what `graph_memory` must never import.
HOST_PACKAGES = {"practice", "accounts", "config", "tests", "demo", "bench"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[zipfile.ZipFile]:
    with zipfile.ZipFile(build_wheel(tmp_path_factory.mktemp("wheel"))) as built:
        yield built


def test_the_wheel_holds_every_file_of_the_package(wheel: zipfile.ZipFile) -> None:
    files = {p.relative_to(ROOT).as_posix() for p in PACKAGE.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    other = {f for f in files if not f.endswith(".py")}
    assert "graph_memory/templates/admin/graph_memory/health.html" in other  # templates, not only code
    assert any(f.startswith("graph_memory/migrations/0001") for f in files)
    assert sorted(files - set(wheel.namelist())) == []


def test_the_wheel_says_what_it_is_and_needs(wheel: zipfile.ZipFile) -> None:
    [name] = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
    metadata = email.message_from_bytes(wheel.read(name))
    assert (metadata["Name"], metadata["Requires-Python"]) == ("graph-memory-layer", ">=3.11")
    assert "Framework :: Django :: 5.2" in metadata.get_all("Classifier")
    requires = metadata.get_all("Requires-Dist")
    assert "Django<6.0,>=5.2" in requires
    assert set(metadata.get_all("Provides-Extra")) == {"local-embeddings", "mcp", "guardian"}
    # Optional: only their own extra brings them.
    optional = [r for r in requires if re.match(r"[\w.-]+", r)[0] in {"mcp", "torch", "django-guardian"}]
    assert optional and all("extra ==" in r for r in optional)


def test_the_package_imports_no_host() -> None:
    found = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            found += [f"{path.relative_to(ROOT)}:{node.lineno} {n}" for n in names if n.split(".")[0] in HOST_PACKAGES]
    assert found == []

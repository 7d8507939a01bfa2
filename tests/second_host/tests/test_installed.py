"""Under `make test` this suite runs against the installed wheel (tests/installed_hosts.py): prove it is so."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import graph_memory

INSTALLED_IN = os.environ.get("GRAPH_MEMORY_INSTALLED_IN", "")
SOURCE = os.environ.get("GRAPH_MEMORY_SOURCE", "")

pytestmark = pytest.mark.skipif(
    not INSTALLED_IN, reason="only when run against the installed wheel (make test: python -m tests.installed_hosts)"
)


def test_graph_memory_is_the_installed_package_not_the_source_tree() -> None:
    package = Path(graph_memory.__file__).resolve().parent
    assert package.is_relative_to(Path(INSTALLED_IN).resolve()), package
    source_root = Path(SOURCE).resolve().parent
    assert all(Path(entry or os.getcwd()).resolve() != source_root for entry in sys.path), sys.path


def test_every_file_of_the_source_package_is_installed() -> None:
    source, installed = Path(SOURCE), Path(graph_memory.__file__).resolve().parent
    files = [p.relative_to(source) for p in source.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    assert any(f.suffix == ".html" for f in files)  # the templates are among them
    assert [f for f in files if not (installed / f).is_file()] == []

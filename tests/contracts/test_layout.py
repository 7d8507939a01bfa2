"""The suite's folders mirror the package's, so a newcomer finds a module's tests by its folder alone."""

from __future__ import annotations

from pathlib import Path

import graph_memory

PACKAGE = Path(graph_memory.__file__).resolve().parent
TESTS = Path(__file__).resolve().parents[1]
# Folders of graph_memory/ with no test folder of their own, and where their tests are.
UNMIRRORED = {
    "management": "each command is tested with what it runs (refresh/test_commands.py, wall/test_triggers.py, ...)",
    "migrations": "contracts/test_migrate.py and wall/test_triggers.py",
    "models": "rows, tested through the code that writes and reads them",
    "templates": "rendered by the admin's tests (admin/)",
}
# Test folders that mirror no folder of graph_memory/.
OWN = {"contracts", "host", "second_host", "third_host", "other_vendor_backend"}


def _folders(root: Path) -> set[str]:
    return {p.name for p in root.iterdir() if p.is_dir() and p.name != "__pycache__"}


def test_every_folder_of_the_package_has_its_test_folder() -> None:
    assert _folders(PACKAGE) - _folders(TESTS) == set(UNMIRRORED)
    assert _folders(TESTS) - _folders(PACKAGE) == OWN


def test_every_test_file_sits_in_a_folder_that_is_a_package() -> None:
    assert sorted(p.name for p in TESTS.glob("test_*.py")) == []
    for folder in _folders(TESTS) - {"second_host", "third_host", "other_vendor_backend"}:
        assert (TESTS / folder / "__init__.py").is_file(), folder  # tests.<folder>.test_<name>: basenames may repeat
        assert list((TESTS / folder).glob("test_*.py")), folder

"""The host developers' tutorial (docs/host-developers.md) quotes this host's adapter: it is imported
here, as the settings name it, and every method the tutorial shows is one the memory calls."""

from __future__ import annotations

import re
from pathlib import Path

from graph_memory.adapter import MemoryAdapter, get_adapter
from tests.second_host.matters.memory_adapter import MattersMemoryAdapter

TUTORIAL = Path(__file__).resolve().parents[3] / "docs" / "host-developers.md"
SHOWN = re.compile(r'^\s*--8<-- "tests/second_host/matters/memory_adapter.py:MattersMemoryAdapter\.(\w+)"', re.M)


def test_the_worked_example_is_the_adapter_this_host_runs() -> None:
    assert type(get_adapter()) is MattersMemoryAdapter and issubclass(MattersMemoryAdapter, MemoryAdapter)


def test_every_method_the_tutorial_shows_overrides_one_the_memory_calls() -> None:
    shown = set(SHOWN.findall(TUTORIAL.read_text()))
    assert len(shown) > 20
    for name in shown:
        assert hasattr(MemoryAdapter, name), f"the tutorial shows {name}, which MemoryAdapter does not have"
        assert name in vars(MattersMemoryAdapter), (
            f"the tutorial shows {name}, which the worked example does not define"
        )


def test_the_worked_example_defines_no_method_the_memory_never_calls() -> None:
    own = {name for name, member in vars(MattersMemoryAdapter).items() if callable(member) and not name.startswith("_")}
    assert {name for name in own if not hasattr(MemoryAdapter, name)} == set()

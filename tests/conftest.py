"""Shared fixtures: the cast (tests/cast.py) as the personas' firm or the demo firm's users, and the demo firm."""

from __future__ import annotations

from pathlib import Path

import pytest

from accounts.models import Firm, User
from practice.importer import import_firm
from tests.cast import Cast, demo_cast, personas_cast

DEMO_FILE = Path(__file__).resolve().parent.parent / "demo" / "hale-ward.json"
# The second and third hosts run in their own pytest invocations, under their own settings (see the Makefile).
collect_ignore = ["second_host", "third_host"]


# The `personas` fixture's firm is the suite's one cast (tests/cast.py); Personas is the name its tests import.
Personas = Cast


@pytest.fixture
def personas(db: None) -> Cast:
    return personas_cast()


@pytest.fixture
def demo_firm(db: None) -> Firm:
    import_firm(DEMO_FILE.read_bytes())
    return Firm.objects.get(slug="hale-ward")


@pytest.fixture
def demo_users(demo_firm: Firm) -> dict[str, User]:
    return {u.username: u for u in User.objects.filter(firm=demo_firm)}


@pytest.fixture(params=["personas", "demo firm"])
def cast(request: pytest.FixtureRequest) -> Cast:
    """Each cast in turn: the test runs once with the personas' firm and once with the demo firm's users."""
    if request.param == "personas":
        return request.getfixturevalue("personas")
    return demo_cast(request.getfixturevalue("demo_users"))


@pytest.fixture
def openai_server(monkeypatch: pytest.MonkeyPatch):  # -> Iterator[OpenAIServer]
    """A local OpenAI-compatible server (tests/openai_server.py); the openai client points at it."""
    from tests.openai_server import OpenAIServer

    server = OpenAIServer().start()
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    yield server
    server.stop()

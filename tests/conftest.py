"""Shared fixtures: the personas every access test uses, and the demo firm."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from accounts.models import Firm, User
from practice.importer import import_firm
from practice.models import Case
from tests.factories import CaseFactory, FirmFactory, UserFactory

DEMO_FILE = Path(__file__).resolve().parent.parent / "demo" / "hale-ward.json"
# The second and third hosts run in their own pytest invocations, under their own settings (see the Makefile).
collect_ignore = ["second_host", "third_host"]


@dataclass
class Personas:
    """One case seen from every side of the wall."""

    firm: Firm
    case: Case
    owner: User
    teammate: User
    outsider: User
    firm_admin: User
    other_firm_admin: User


@pytest.fixture
def personas(db: None) -> Personas:
    firm = FirmFactory(slug="acme-law")
    owner = UserFactory(firm=firm, username="owner")
    teammate = UserFactory(firm=firm, username="teammate")
    outsider = UserFactory(firm=firm, username="outsider")
    firm_admin = UserFactory(firm=firm, username="firm-admin", role=User.Role.ADMIN)
    other_firm_admin = UserFactory(firm=FirmFactory(slug="other-law"), username="other-admin", role=User.Role.ADMIN)
    case = CaseFactory(firm=firm, owner=owner, team=[teammate])
    return Personas(firm, case, owner, teammate, outsider, firm_admin, other_firm_admin)


@pytest.fixture
def demo_firm(db: None) -> Firm:
    import_firm(DEMO_FILE.read_bytes())
    return Firm.objects.get(slug="hale-ward")


@pytest.fixture
def demo_users(demo_firm: Firm) -> dict[str, User]:
    return {u.username: u for u in User.objects.filter(firm=demo_firm)}


@pytest.fixture
def openai_server(monkeypatch: pytest.MonkeyPatch):  # -> Iterator[OpenAIServer]
    """A local OpenAI-compatible server (tests/openai_server.py); the openai client points at it."""
    from tests.openai_server import OpenAIServer

    server = OpenAIServer().start()
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    yield server
    server.stop()

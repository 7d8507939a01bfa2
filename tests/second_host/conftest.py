"""Fixtures of the second host's suite: the personas, and the local OpenAI-compatible server.

This suite runs on its own (`--ds=tests.second_host.settings
--confcutdir=tests/second_host`): the main suite's tests/conftest.py, which
imports the reference host, is never loaded here.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

if os.environ.get("DJANGO_SETTINGS_MODULE") != "tests.second_host.settings":
    raise pytest.UsageError(
        "tests/second_host runs under its own settings: make test, or "
        "python -m pytest tests/second_host --ds=tests.second_host.settings --confcutdir=tests/second_host"
    )

from graph_memory import services
from tests.openai_server import OpenAIServer
from tests.second_host.factories import AttorneyFactory, LawOfficeFactory, MatterFactory
from tests.second_host.matters.models import Matter
from tests.second_host.offices.models import Attorney, LawOffice
from tests.second_host.world import Office, build_office


@dataclass
class Personas:
    """One matter seen from every side of the wall."""

    office: LawOffice
    matter: Matter
    owner: Attorney  # the matter's lead
    teammate: Attorney  # assigned to it
    outsider: Attorney  # same office, not on it
    firm_admin: Attorney  # manages the office
    other_firm_admin: Attorney  # manages another office


@pytest.fixture
def personas(db: None) -> Personas:
    office = LawOfficeFactory(code="kanzlei-nord")
    owner = AttorneyFactory(office=office, username="owner", full_name="Olga Owner")
    teammate = AttorneyFactory(office=office, username="teammate", full_name="Tariq Teammate")
    outsider = AttorneyFactory(office=office, username="outsider", full_name="Otto Outsider")
    firm_admin = AttorneyFactory(office=office, username="firm-admin", full_name="Frieda Admin", manages_office=True)
    other_firm_admin = AttorneyFactory(
        office=LawOfficeFactory(code="kanzlei-sued"), username="other-admin", manages_office=True
    )
    matter = MatterFactory(office=office, lead=owner, team=[teammate])
    return Personas(office, matter, owner, teammate, outsider, firm_admin, other_firm_admin)


@pytest.fixture
def openai_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIServer]:
    """A local OpenAI-compatible server (tests/openai_server.py); the openai client points at it."""
    server = OpenAIServer().start()
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    yield server
    server.stop()


@pytest.fixture
def memory(db: None, settings: Any) -> Office:
    """tests/second_host/world.py's offices with their connection maps and an extractive summary of every matter."""
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "WRITER": "extractive", "EMBEDDER": "none"}
    world = build_office()
    for office in (world.office, world.other):
        services.graph_rebuild_firm(firm_id=office.pk)
    for matter in world.matters.values():
        services.summarize_case(case_id=matter.pk)
    return world

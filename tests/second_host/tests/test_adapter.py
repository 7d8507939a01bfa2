"""The second host plugs the memory in through settings and its adapter only, and nothing in graph_memory knows it."""

from __future__ import annotations

import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db.migrations.loader import MigrationLoader

from graph_memory import services
from graph_memory.models import CaseSummary, Edge, Node, SummaryVersion
from graph_memory.wall import access
from tests.second_host.matters.models import Matter
from tests.second_host.offices.models import Attorney, LawOffice
from tests.second_host.world import ACQ, Office

GRAPH_MEMORY = Path(__file__).resolve().parents[3] / "graph_memory"
# Model and field names only this host uses: none of them may appear anywhere in the app. (Its docs may
# point at tests/second_host/ as a worked example; its code may not name anything in it.)
HOST_NAMES = ("LawOffice", "Attorney", "office_id", "manages_office", "Engagement", "FilingPage", "TimeEntry",
              "DueDate", "last_touched", "opened_on", "synopsis", "tests.second_host")  # fmt: skip


def test_graph_memory_names_nothing_of_this_host() -> None:
    found = [
        f"{path.relative_to(GRAPH_MEMORY.parent)}: {name}"
        for path in sorted(GRAPH_MEMORY.rglob("*"))
        if path.is_file() and path.suffix in {".py", ".html", ".txt", ".md"}
        for name in HOST_NAMES
        if re.search(rf"\b{re.escape(name)}\b", path.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_the_memory_models_point_at_this_hosts_models() -> None:
    for model in (CaseSummary, SummaryVersion, Edge):
        assert model._meta.get_field("case").related_model is Matter, model
    for model in (CaseSummary, Node, Edge):
        assert model._meta.get_field("firm").related_model is LawOffice, model


@pytest.mark.django_db
def test_the_memory_migrations_follow_the_two_settings() -> None:
    loader = MigrationLoader(None, ignore_no_migrations=True)
    parents = {parent for key in loader.graph.nodes if key[0] == "graph_memory" for parent in loader.graph.node_map[key].parents}
    host_parents = {key for key in (p.key for p in parents) if key[0] != "graph_memory"}
    assert host_parents == {("matters", "0001_initial"), ("offices", "0001_initial")}
    out = StringIO()
    call_command("makemigrations", "--check", "--dry-run", stdout=out)  # exits non-zero if a model drifted
    assert "No changes detected" in out.getvalue()


@pytest.mark.django_db
def test_system_checks_pass_without_guardian() -> None:
    out = StringIO()
    call_command("check", "--database", "default", stdout=out)
    assert "no issues" in out.getvalue()


@pytest.mark.django_db
def test_no_read_needs_firm_id_or_is_firm_admin_on_the_viewer(memory: Office) -> None:
    # This host's user has `office` and `manages_office`: the adapter answers for them, everywhere.
    assert not hasattr(Attorney, "firm_id") and not hasattr(Attorney, "is_firm_admin")
    case = Node.objects.get(kind="case", ref_id=memory.matters[ACQ].pk)
    for persona in ("owner", "firm_admin"):
        assert services.node_brief(viewer=memory.people[persona], node_id=case.pk).cases[0].key == ACQ
    with pytest.raises(access.NotFound):
        services.node_brief(viewer=memory.people["other_admin"], node_id=case.pk)

"""The lint pass on the second host: its adapter's records (the default `lint_records`, case by case) and map."""

from __future__ import annotations

from typing import Any

import pytest

from graph_memory import services
from graph_memory.lint import lint_firm
from graph_memory.models import LintFinding
from tests.second_host.matters.models import DueDate, Matter
from tests.second_host.world import ACQ, Office, build_office

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(settings: Any) -> Office:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "WRITER": "extractive", "EMBEDDER": "none"}
    return build_office()


def _codes(office_id: int) -> list[tuple[str, str]]:
    run = lint_firm(firm_id=office_id)
    assert run.status == "done", run.error
    return sorted(LintFinding.objects.filter(run=run).values_list("kind", "code"))


def test_lint_on_the_second_host(world: Office) -> None:
    office = world.office
    matters = list(Matter.objects.filter(office=office))
    assert {code for kind, code in _codes(office.pk) if kind == "map_drift"} >= {"node_missing", "edge_drift"}
    services.graph_rebuild_firm(firm_id=office.pk)
    for matter in matters:
        services.summarize_case(case_id=matter.pk)
    assert _codes(office.pk) == []  # a clean office: nothing of any kind
    DueDate.objects.filter(matter__reference=ACQ, label="Target signing").update(state=DueDate.State.MET)
    assert ("contradicted", "deadline_done") in _codes(office.pk)
    done = LintFinding.objects.get(code="deadline_done")
    assert done.case_id == world.matters[ACQ].pk and "Target signing" in done.message

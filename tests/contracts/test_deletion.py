"""Deletion: a deleted case, client, counterparty or user leaves nothing derived behind.

Run with real commits (transaction=True), so the map is kept in step by the
signal receivers' on-commit syncs exactly as in production, summaries are
written by the openai writer against the local test server, and vectors by
the openai embedder (a Celery task run eagerly on commit). Each test counts
rows per table before and after, and then looks for the deleted case's text
in every column of every table of the database.
"""

from __future__ import annotations

import datetime as dt
import logging
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from accounts.models import Firm, User
from graph_memory import services
from graph_memory.models import AICall, CaseSummary, Edge, Node, RefreshRun, Sight, SummaryVersion
from graph_memory.summaries.rulebook import empty_content
from practice.models import (
    Case,
    CaseUserObjectPermission,
    Client,
    Counterparty,
    Deadline,
    Document,
    Draft,
    Invoice,
    Note,
)
from tests.factories import CaseFactory, ClientFactory, CounterpartyFactory, FirmFactory, UserFactory
from tests.openai_server import OpenAIServer, Reply

pytestmark = pytest.mark.django_db(transaction=True)

CANARY = "zqdoomedvx"  # in every record of the deleted case, and nowhere else


@pytest.fixture(autouse=True)
def model_settings(settings: Any, openai_server: OpenAIServer) -> OpenAIServer:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "WRITER": "openai", "EMBEDDER": "openai", "OPENAI_MAX_RETRIES": 0, "OPENAI_TIMEOUT": 10.0}
    return openai_server


def quoting_reply(case: Case) -> Reply:
    """A model answer that passes verification and quotes the case's own words: the description's first
    sentence (s1), which the selection serves word for word."""
    assert case.description
    content = empty_content()
    content["status"] = [{"ids": ["s1"], "label": "", "short": ""}]
    return Reply.json(content)


def counts() -> dict[str, int]:
    return {
        "nodes": Node.objects.count(),
        "edges": Edge.objects.count(),
        "summaries": CaseSummary.objects.count(),
        "vectors": CaseSummary.objects.filter(embedding__isnull=False).count(),
        "versions": SummaryVersion.objects.count(),
        "ai_calls": AICall.objects.count(),
        "runs": RefreshRun.objects.count(),
        "permissions": CaseUserObjectPermission.objects.count(),
    }


def tables_quoting(text: str) -> list[str]:
    """Every table of the database with a row whose text form (all columns) contains `text`."""
    found = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names(cursor):
            quoted = connection.ops.quote_name(table)
            cursor.execute(f"SELECT EXISTS (SELECT 1 FROM {quoted} t WHERE t::text ILIKE %s)", [f"%{text}%"])
            if cursor.fetchone()[0]:
                found.append(table)
    return sorted(found)


def node_refs(firm: Firm) -> set[tuple[str, int]]:
    return set(Node.objects.filter(firm=firm).values_list("kind", "ref_id"))


@pytest.fixture
def world(openai_server: OpenAIServer, caplog: Any) -> dict[str, Any]:
    caplog.set_level(logging.DEBUG, logger="graph_memory")
    firm = FirmFactory(slug="deletion-law")
    alice, bob, carol = (UserFactory(firm=firm, username=name) for name in ("alice", "bob", "carol"))
    lone_client, shared_client = ClientFactory(firm=firm, name="Solo Client Ltd"), ClientFactory(firm=firm)
    lone_cp, shared_cp = CounterpartyFactory(firm=firm, name="Solo Party LLC"), CounterpartyFactory(firm=firm)
    doomed = CaseFactory(
        firm=firm, owner=alice, client=lone_client, team=[bob, carol], counterparties=[lone_cp, shared_cp],
        title=f"Matter {CANARY}", description=f"Advice on the {CANARY} dispute.",
    )  # fmt: skip
    keeper = CaseFactory(firm=firm, owner=alice, client=shared_client, team=[carol], counterparties=[shared_cp])
    now = timezone.now()
    common = {"firm": firm, "case": doomed}
    Document.objects.create(**common, key="d1", title=f"Exhibit {CANARY}", status="processed", created=now,
                            pages=[f"The {CANARY} exhibit."])  # fmt: skip
    Draft.objects.create(**common, key="r1", title=f"Letter {CANARY}", created=now, text=f"About {CANARY}.")
    Deadline.objects.create(**common, key="t1", title=f"Filing {CANARY}", due=dt.date(2026, 12, 1))
    Invoice.objects.create(**common, key="i1", number=f"INV-{CANARY}", issued=dt.date(2026, 5, 1),
                           amount=Decimal("10.00"), currency="USD")  # fmt: skip
    Note.objects.create(**common, key="n1", author=alice, created=now, text=f"Call about {CANARY}?")
    # History: a first summary, a garbage answer (logged, rejected), a second summary; the keeper's comes nightly.
    openai_server.add_chat(quoting_reply(doomed), Reply.raw("not json"), quoting_reply(doomed), quoting_reply(keeper))
    services.summarize_case(case_id=doomed.pk)
    services.mark_stale(case_ids=[doomed.pk])
    with pytest.raises(services.SummaryFailed):
        services.summarize_case(case_id=doomed.pk)
    services.summarize_case(case_id=doomed.pk)
    run = services.refresh_firm(firm_id=firm.pk)
    assert (run.status, run.claimed, run.rewritten) == ("done", 1, 1)
    assert services.graph_rebuild_firm(firm_id=firm.pk).written == 0  # the signals kept the map current
    return {"firm": firm, "doomed": doomed, "keeper": keeper, "alice": alice, "bob": bob, "carol": carol,
            "lone_client": lone_client, "shared_client": shared_client, "lone_cp": lone_cp, "shared_cp": shared_cp}  # fmt: skip


def test_deleting_a_case_removes_every_derived_row_and_every_quote(world: dict[str, Any], caplog: Any) -> None:
    doomed, firm = world["doomed"], world["firm"]
    assert SummaryVersion.objects.filter(case=doomed).count() == 2
    assert CaseSummary.objects.get(case=doomed).embedding is not None
    # Positive control: the case's words are in its host records and in its summary and history.
    assert {"graph_memory_casesummary", "graph_memory_sight", "graph_memory_summaryversion", "practice_case", "practice_note"} <= set(
        tables_quoting(CANARY)
    )
    assert AICall.objects.filter(case=doomed).count() >= 4  # three chat calls and at least one embedding
    before, refs_before = counts(), node_refs(firm)
    edges_of_case = Edge.objects.filter(case=doomed).count()
    permissions_of_case = CaseUserObjectPermission.objects.filter(content_object=doomed).count()
    calls_of_case = set(AICall.objects.filter(case=doomed).values_list("pk", flat=True))
    doomed_id = doomed.pk

    doomed.delete()

    after = counts()
    gone = {("case", doomed_id), ("client", world["lone_client"].pk), ("counterparty", world["lone_cp"].pk),
            ("lawyer", world["bob"].pk)}  # fmt: skip
    assert refs_before - node_refs(firm) == gone  # the case's node and every node it alone held
    assert {("lawyer", world["alice"].pk), ("lawyer", world["carol"].pk), ("counterparty", world["shared_cp"].pk)} <= node_refs(firm)
    assert before["nodes"] - after["nodes"] == len(gone)
    assert before["edges"] - after["edges"] == edges_of_case == 1 + 2 + 1 + 2  # owner, team, client, parties
    assert (before["summaries"] - after["summaries"], before["vectors"] - after["vectors"]) == (1, 1)
    assert before["versions"] - after["versions"] == 2
    assert before["permissions"] - after["permissions"] == permissions_of_case == 3
    # The AI-call log keeps its counts (tokens, latency, outcome) but no longer points at the case.
    assert (after["ai_calls"], after["runs"]) == (before["ai_calls"], before["runs"])
    assert not AICall.objects.filter(pk__in=calls_of_case, case__isnull=False).exists()
    # Nothing anywhere in the database quotes the case any more, and nothing logged ever did.
    assert tables_quoting(CANARY) == []
    logged = caplog.get_records("setup") + caplog.records  # summaries, rejections and embeddings, then the deletion
    assert len(logged) > 0 and not [r for r in logged if CANARY in r.getMessage()]
    assert services.graph_rebuild_firm(firm_id=firm.pk).written == 0


def test_deleting_a_client_and_a_counterparty_after_their_cases_removes_their_nodes(world: dict[str, Any]) -> None:
    firm, keeper = world["firm"], world["keeper"]
    client, party = world["shared_client"], world["shared_cp"]
    world["doomed"].delete()
    keeper.counterparties.remove(party)
    assert ("counterparty", party.pk) not in node_refs(firm)  # left without an edge: gone with its last link
    party.delete()
    summaries = CaseSummary.objects.count()
    keeper_id = keeper.pk
    keeper.delete()
    client.delete()
    assert not Client.objects.filter(pk=client.pk).exists() and not Counterparty.objects.filter(pk=party.pk).exists()
    refs = node_refs(firm)
    assert not {("client", client.pk), ("counterparty", party.pk), ("case", keeper_id)} & refs
    # No case is left, so nothing is: no node, edge, summary or vector of the firm.
    assert refs == set() and not Edge.objects.filter(firm=firm).exists()
    assert CaseSummary.objects.count() == summaries - 1 and not CaseSummary.objects.filter(firm=firm).exists()
    assert not SummaryVersion.objects.filter(firm=firm).exists()


def test_deleting_a_user_removes_their_node_edges_and_permissions(world: dict[str, Any]) -> None:
    firm, carol = world["firm"], world["carol"]
    before = counts()
    edges = Edge.objects.filter(source__kind="lawyer", source__ref_id=carol.pk).count()
    assert edges == 2 and ("lawyer", carol.pk) in node_refs(firm)

    User.objects.filter(pk=carol.pk).delete()

    after = counts()
    assert ("lawyer", carol.pk) not in node_refs(firm)
    assert (before["nodes"] - after["nodes"], before["edges"] - after["edges"]) == (1, edges)
    assert before["permissions"] - after["permissions"] == 2
    assert not CaseUserObjectPermission.objects.filter(user_id=carol.pk).exists()
    assert not Sight.objects.filter(holder=carol.pk).exists()
    # Her cases and their summaries stay; only what was hers went.
    assert (before["summaries"], before["versions"]) == (after["summaries"], after["versions"])
    assert services.graph_rebuild_firm(firm_id=firm.pk).written == 0

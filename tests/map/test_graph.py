"""The connection map's writing side: deterministic rebuilds, incremental syncs, deletions."""

from __future__ import annotations

import datetime as dt
import itertools
import random
import uuid
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.db.models import F
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accounts.models import Firm, User
from graph_memory import services
from graph_memory.map.graph import edge_uuid, node_uuid
from graph_memory.models import Edge, Node
from graph_memory.tasks import graph_rebuild_firm_task
from practice.memory_adapter import PracticeMemoryAdapter
from practice.models import Case, CaseCounterparty, CaseTeamMember, CaseUserObjectPermission, Client, Counterparty
from tests.factories import CaseFactory, ClientFactory, CounterpartyFactory, FirmFactory, UserFactory

pytestmark = pytest.mark.django_db


def snapshot(firm_id: int) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Every stored column of the firm's nodes and edges, in a fixed order."""
    nodes = Node.objects.filter(firm_id=firm_id).order_by("id")
    edges = Edge.objects.filter(firm_id=firm_id).order_by("id")
    return (
        list(nodes.values_list("id", "firm_id", "kind", "ref_id", "label", "name_key", "party_key")),
        list(edges.values_list("id", "firm_id", "case_id", "kind", "source_id", "target_id")),
    )


def assert_no_dangling_edges() -> None:
    """What the database no longer checks for edges (see models/graph.py): every end is a stored node."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*) FROM {Edge._meta.db_table} e WHERE NOT EXISTS (SELECT 1 FROM {Node._meta.db_table} n "
            "WHERE n.id = e.source_id AND n.firm_id = e.firm_id) OR NOT EXISTS (SELECT 1 FROM "
            f"{Node._meta.db_table} n WHERE n.id = e.target_id AND n.firm_id = e.firm_id)"
        )
        assert cursor.fetchone()[0] == 0


def row_versions() -> dict[str, str]:
    """xmin of every node and edge row: it changes whenever PostgreSQL writes the row."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id::text, xmin::text FROM {Node._meta.db_table} UNION ALL SELECT id::text, xmin::text FROM {Edge._meta.db_table}"
        )
        return dict(cursor.fetchall())


def delete_case(case: Case) -> None:
    """Delete a case as the host does; its permission rows go with it."""
    case_id = case.pk
    case.delete()
    assert not CaseUserObjectPermission.objects.filter(content_object_id=case_id).exists()


def labelled_edges(firm_id: int) -> set[tuple[str, str, str, str]]:
    return set(
        Edge.objects.filter(firm_id=firm_id).values_list("case__key", "source__label", "kind", "target__label")
    )


def test_demo_firm_map(demo_firm: Firm) -> None:
    changes = services.graph_rebuild_firm(firm_id=demo_firm.pk)
    kinds = dict.fromkeys(Node.Kind.values, 0)
    for kind in Node.objects.filter(firm=demo_firm).values_list("kind", flat=True):
        kinds[kind] += 1
    # dana works on no case, so she is no node.
    assert kinds == {"lawyer": 4, "case": 4, "client": 3, "counterparty": 4}
    assert changes.nodes_added == 15 and changes.edges_added == 14 and changes.removed == 0
    assert ("2026-031", "Evan Shaw", "works_on", "2026-031 Brightline v. Northwind (breach of logistics agreement)") in labelled_edges(demo_firm.pk)
    assert ("2026-031", "2026-031 Brightline v. Northwind (breach of logistics agreement)", "against", "NORTHWIND HOLDINGS INC") in labelled_edges(demo_firm.pk)
    client = Node.objects.get(firm=demo_firm, kind="client", label="Northwind Holdings, Inc.")
    assert client.name_key == "northwind holdings inc" and client.party_key == "northwind holdings"
    assert client.pk == node_uuid(firm_id=demo_firm.pk, kind="client", ref_id=client.ref_id)
    edge = Edge.objects.get(firm=demo_firm, kind="for_client", target=client)
    assert edge.pk == edge_uuid(case_id=edge.case_id, kind="for_client", source_id=edge.source_id, target_id=client.pk)


def test_rebuild_twice_gives_identical_rows_and_the_second_writes_nothing(demo_firm: Firm) -> None:
    services.graph_rebuild_firm(firm_id=demo_firm.pk)
    before, versions = snapshot(demo_firm.pk), row_versions()
    again = services.graph_rebuild_firm(firm_id=demo_firm.pk)
    assert again.written == 0 and again.unchanged == 29
    assert snapshot(demo_firm.pk) == before
    assert row_versions() == versions  # not one row rewritten, not even with the same values


def test_rebuild_from_scratch_gives_the_same_ids(demo_firm: Firm) -> None:
    services.graph_rebuild_firm(firm_id=demo_firm.pk)
    before = snapshot(demo_firm.pk)
    Node.objects.filter(firm=demo_firm).delete()
    assert services.graph_rebuild_firm(firm_id=demo_firm.pk).added == 29
    assert snapshot(demo_firm.pk) == before


FIRM_SPEC = {
    "users": [(990_001, "ann"), (990_002, "ben"), (990_003, "cat")],
    "clients": [(990_101, "Acme Corp."), (990_102, "Globex GmbH")],
    "counterparties": [(990_201, "Initech LLC"), (990_202, "ACME CORPORATION")],
    # case id, client, owner, team, counterparties
    "cases": [
        (990_301, 990_101, 990_001, [990_002], [990_201]),
        (990_302, 990_102, 990_002, [990_001, 990_003], [990_201, 990_202]),
        (990_303, 990_101, 990_003, [], []),
    ],
}


def insert_firm(order: random.Random) -> int:
    """The same records with the same ids, each list inserted in a shuffled order."""

    def shuffled(items: list[Any]) -> list[Any]:
        items = list(items)
        order.shuffle(items)
        return items

    firm = FirmFactory(slug="ordered-llp")
    User.objects.bulk_create(User(pk=pk, username=name, name=name.title(), firm=firm) for pk, name in shuffled(FIRM_SPEC["users"]))
    Client.objects.bulk_create(Client(pk=pk, key=str(pk), name=name, firm=firm) for pk, name in shuffled(FIRM_SPEC["clients"]))
    Counterparty.objects.bulk_create(
        Counterparty(pk=pk, key=str(pk), name=name, firm=firm) for pk, name in shuffled(FIRM_SPEC["counterparties"])
    )
    cases = shuffled(FIRM_SPEC["cases"])
    Case.objects.bulk_create(
        Case(pk=pk, key=str(pk), title="T", opened=dt.date(2026, 1, 1), client_id=client, owner_id=owner, firm=firm)
        for pk, client, owner, _, _ in cases
    )
    CaseTeamMember.objects.bulk_create(
        shuffled([CaseTeamMember(case_id=pk, user_id=u, firm=firm) for pk, _, _, team, _ in cases for u in team])
    )
    CaseCounterparty.objects.bulk_create(
        shuffled([CaseCounterparty(case_id=pk, counterparty_id=c, firm=firm) for pk, _, _, _, cps in cases for c in cps])
    )
    return firm.pk


def delete_firm_records(firm_id: int) -> None:
    Node.objects.filter(firm_id=firm_id).delete()
    for model in (CaseTeamMember, CaseCounterparty, CaseUserObjectPermission):
        model.objects.filter(**({"content_object__firm_id": firm_id} if model is CaseUserObjectPermission else {"firm_id": firm_id})).delete()
    for model in (Case, Client, Counterparty, User):
        model.objects.filter(firm_id=firm_id).delete()


def test_rebuild_after_inserting_records_in_another_order_is_identical(db: None) -> None:
    snapshots = []
    for seed in (1, 2, 3):
        firm_id = insert_firm(random.Random(seed))
        services.graph_rebuild_firm(firm_id=firm_id)
        snapshots.append(snapshot(firm_id))
        delete_firm_records(firm_id)
    assert snapshots[0] == snapshots[1] == snapshots[2]
    nodes, edges = snapshots[0]
    assert len(nodes) == 3 + 3 + 2 + 2 and len(edges) == 3 + 3 + 3 + 3


def test_deleting_a_case_removes_its_edges_its_node_and_orphans_only(personas, django_capture_on_commit_callbacks) -> None:
    p = personas
    lone_client, lone_cp, shared_cp = ClientFactory(firm=p.firm), CounterpartyFactory(firm=p.firm), CounterpartyFactory(firm=p.firm)
    lone_lawyer = UserFactory(firm=p.firm)
    doomed = CaseFactory(firm=p.firm, owner=p.owner, client=lone_client, team=[lone_lawyer], counterparties=[lone_cp, shared_cp])
    CaseFactory(firm=p.firm, owner=p.owner, client=p.case.client, counterparties=[shared_cp])
    services.graph_rebuild_firm(firm_id=p.firm.pk)
    with django_capture_on_commit_callbacks(execute=True):
        delete_case(doomed)
    refs = set(Node.objects.filter(firm=p.firm).values_list("kind", "ref_id"))
    assert ("case", doomed.pk) not in refs
    assert not {("client", lone_client.pk), ("counterparty", lone_cp.pk), ("lawyer", lone_lawyer.pk)} & refs
    assert {("counterparty", shared_cp.pk), ("lawyer", p.owner.pk), ("case", p.case.pk)} <= refs
    assert not Edge.objects.filter(case_id=doomed.pk).exists()
    assert_no_dangling_edges()
    assert services.graph_rebuild_firm(firm_id=p.firm.pk).written == 0


def test_importing_the_demo_through_signals_builds_the_same_map_as_a_rebuild(db: None, django_capture_on_commit_callbacks) -> None:
    from practice.importer import import_firm
    from tests.conftest import DEMO_FILE

    with django_capture_on_commit_callbacks(execute=True):
        import_firm(DEMO_FILE.read_bytes())
    firm = Firm.objects.get(slug="hale-ward")
    assert Node.objects.filter(firm=firm).count() == 15
    assert services.graph_rebuild_firm(firm_id=firm.pk).written == 0


def test_renames_refresh_labels_and_logins_do_not(personas, django_capture_on_commit_callbacks) -> None:
    p = personas
    cp = CounterpartyFactory(firm=p.firm)
    p.case.counterparties.add(cp, through_defaults={"firm": p.firm})
    services.graph_rebuild_firm(firm_id=p.firm.pk)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        Client.objects.filter(pk=p.case.client_id).update(name="Old name")  # no signal: drift a rebuild fixes
        client = Client.objects.get(pk=p.case.client_id)
        client.name = "Umlaut Ärger GmbH"
        client.save()
        cp.name = "New Counterparty S.A."
        cp.save()
        p.owner.name = "Renamed Owner"
        p.owner.save(update_fields=["name"])
        p.teammate.save(update_fields=["last_login"])
    assert len(callbacks) == 3
    node = Node.objects.get(kind="client", ref_id=client.pk)
    assert (node.label, node.name_key, node.party_key) == ("Umlaut Ärger GmbH", "umlaut arger gmbh", "umlaut arger")
    assert Node.objects.get(kind="counterparty", ref_id=cp.pk).party_key == "new counterparty"
    assert Node.objects.get(kind="lawyer", ref_id=p.owner.pk).label == "Renamed Owner"
    assert services.graph_rebuild_firm(firm_id=p.firm.pk).written == 0


def test_rebuild_command_and_task(demo_firm: Firm, capsys) -> None:
    call_command("rebuild_graph", "--firm", "hale-ward")
    out = capsys.readouterr().out
    assert "29 row(s) added, 0 removed, 0 relabelled, 0 unchanged" in out
    call_command("rebuild_graph")
    assert "0 row(s) added, 0 removed, 0 relabelled, 29 unchanged (already up to date" in capsys.readouterr().out
    with pytest.raises(CommandError, match="unknown firm: nope"):
        call_command("rebuild_graph", "--firm", "nope")
    assert graph_rebuild_firm_task(demo_firm.pk)["written"] == 0


def test_sync_of_an_unknown_case_does_nothing(db: None) -> None:
    assert services.graph_sync_case(case_id=987_654_321).written == 0


# --- Incremental sync equals a full rebuild, whatever the edits ----------------------

OPS = st.lists(
    st.tuples(
        st.sampled_from(
            [
                "owner", "client", "team_add", "team_remove", "team_create", "team_row_delete", "team_clear_user",
                "cp_add", "cp_remove", "cp_clear", "cp_clear_party", "rename_client", "rename_cp", "rename_user",
                "delete_case", "new_case",
            ]
        ),
        st.integers(0, 10_000),
        st.integers(0, 10_000),
    ),
    min_size=1,
    max_size=10,
)
_firm_numbers = itertools.count()


def apply_op(firm: Firm, op: str, a: int, b: int) -> None:
    users = list(User.objects.filter(firm=firm).order_by("pk"))
    clients = list(Client.objects.filter(firm=firm).order_by("pk"))
    cps = list(Counterparty.objects.filter(firm=firm).order_by("pk"))
    cases = list(Case.objects.filter(firm=firm).order_by("pk"))
    user, client, cp = users[b % len(users)], clients[b % len(clients)], cps[b % len(cps)]
    if op == "new_case" or not cases:
        CaseFactory(firm=firm, owner=user, client=client, team=users[: a % 3], counterparties=cps[: b % 3])
        return
    case = cases[a % len(cases)]
    if op == "owner":
        case.owner = user
        case.save()
    elif op == "client":
        case.client = client
        case.save(update_fields=["client"])
    elif op == "team_add":
        case.team.add(user, through_defaults={"firm": firm})
    elif op == "team_remove":
        case.team.remove(user)
    elif op == "team_create":
        CaseTeamMember.objects.get_or_create(case=case, user=user, defaults={"firm": firm})
    elif op == "team_row_delete":
        for row in CaseTeamMember.objects.filter(case=case)[:1]:
            row.delete()
    elif op == "team_clear_user":
        user.team_cases.clear()
    elif op == "cp_add":
        case.counterparties.add(cp, through_defaults={"firm": firm})
    elif op == "cp_remove":
        case.counterparties.remove(cp)
    elif op == "cp_clear":
        case.counterparties.clear()
    elif op == "cp_clear_party":
        cp.cases.clear()
    elif op == "rename_client":
        client.name = random.Random(a).choice(["Acme Corp.", "ACME CORPORATION", "Ünïcode Ltd", client.name + "!"])
        client.save()
    elif op == "rename_cp":
        cp.name = f"Party {a} S.A."
        cp.save()
    elif op == "rename_user":
        user.name = f"Lawyer {a}"
        user.save()
    elif op == "delete_case":
        delete_case(case)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS)
def test_incremental_sync_equals_a_full_rebuild(db: None, django_capture_on_commit_callbacks, ops: list[tuple[str, int, int]]) -> None:
    firm = FirmFactory(slug=f"prop-{next(_firm_numbers)}")
    users = [UserFactory(firm=firm) for _ in range(3)]
    clients = [ClientFactory(firm=firm) for _ in range(2)]
    cps = [CounterpartyFactory(firm=firm) for _ in range(3)]
    for i in range(3):
        CaseFactory(firm=firm, owner=users[i], client=clients[i % 2], team=users[i + 1 :], counterparties=cps[i:])
    services.graph_rebuild_firm(firm_id=firm.pk)
    with django_capture_on_commit_callbacks(execute=True):
        for op, a, b in ops:
            apply_op(firm, op, a, b)
    synced = snapshot(firm.pk)
    assert_no_dangling_edges()
    changes = services.graph_rebuild_firm(firm_id=firm.pk)
    assert changes.written == 0, (ops, changes)
    assert snapshot(firm.pk) == synced


def test_ids_are_opaque_uuids(demo_firm: Firm) -> None:
    services.graph_rebuild_firm(firm_id=demo_firm.pk)
    for node_id in Node.objects.filter(firm=demo_firm).values_list("id", flat=True):
        # Version 8: keyed with the installation's secret (tests/map/test_node_ids.py), not uuid3.
        assert isinstance(node_id, uuid.UUID) and node_id.version == 8


class NoLinksAdapter(PracticeMemoryAdapter):
    """A host with no teams and no counterparties: its link QuerySets are `.none()` (issue 29)."""

    def graph_team_links(self, **scope: Any) -> Any:
        return CaseTeamMember.objects.none().values(case_ref=F("case_id"), user_ref=F("user_id"), user_label=F("user__name"))

    def graph_counterparty_links(self, **scope: Any) -> Any:
        return CaseCounterparty.objects.none().values(
            case_ref=F("case_id"), party_ref=F("counterparty_id"), party_label=F("counterparty__name")
        )


def test_adapter_querysets_that_select_nothing_are_compiled_too(personas, settings: Any) -> None:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "ADAPTER": "tests.map.test_graph.NoLinksAdapter"}
    CaseCounterparty.objects.create(case=personas.case, counterparty=CounterpartyFactory(firm=personas.firm), firm=personas.firm)
    changes = services.graph_rebuild_firm(firm_id=personas.firm.pk)
    kinds = sorted(Edge.objects.filter(case_id=personas.case.pk).values_list("kind", flat=True))
    assert kinds == ["for_client", "works_on"] and changes.edges_added == 2  # the owner's edge; no team, no parties
    assert services.graph_sync_case(case_id=personas.case.pk).written == 0
    assert services.mark_stale(case_ids=Case.objects.none()) == 0

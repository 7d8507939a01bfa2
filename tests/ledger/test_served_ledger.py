"""The served ledger (issue 31, item 3): one row per answer, the cases it drew on, a chain that shows tampering.

The routes come from the API's own URLconf (as tests/api/test_cache_headers.py
walks them) and the tools from the MCP server's own list, so an endpoint or a
tool added later is held to the same rule without touching this file.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import uuid
from typing import Any

import anyio
import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client as HttpClient
from django.test.utils import CaptureQueriesContext
from django.urls import URLPattern, reverse
from django.utils import timezone

from accounts.models import Firm, User
from graph_memory.api.mcp_server import call_endpoint
from graph_memory.api.tools import tool_definitions
from graph_memory.ledger import served_chain, served_ledger
from graph_memory.models import Node, ServedChain, ServedRow
from practice.models import Case
from practice.models import Note as PracticeNote
from tests import plans
from tests.api.test_cache_headers import ROUTES, _ask, _methods, _path
from tests.api_support import C014, C031, C088, NW, VISIBLE, World, build_world, node

pytestmark = pytest.mark.django_db

PREFIX = "/api/memory/"


@pytest.fixture
def world(demo_firm: Firm, demo_users: dict[str, User], settings: Any) -> World:
    return build_world(demo_firm, demo_users, settings)


def case_pk(label: str) -> int:
    return node("case", label).ref_id


def rows() -> list[ServedRow]:
    return list(ServedRow.objects.order_by("id"))


def one_new_row(before: int) -> ServedRow:
    new = list(ServedRow.objects.filter(id__gt=before).order_by("id"))
    assert len(new) == 1, [(r.endpoint, r.status) for r in new]
    return new[0]


def last_id() -> int:
    return ServedRow.objects.order_by("-id").values_list("id", flat=True).first() or 0


@pytest.mark.parametrize(("route", "pattern"), ROUTES, ids=[route for route, _ in ROUTES])
def test_every_endpoint_writes_exactly_one_row_per_answer(world: World, route: str, pattern: URLPattern) -> None:
    visible = str(node("case", C014).pk)  # alice's
    seen: set[str] = set()
    for method in _methods(pattern):
        for value in (visible, str(uuid.uuid4()), "not-an-id"):
            before = last_id()
            # A note's body takes its own fields only (strict bodies: an unknown field is refused, issue 32).
            params = {} if method == "post" else {"q": "Northwind", "name": "Northwind"}
            response = _ask(world.client("alice"), method, _path(route, value), params)
            row = one_new_row(before)
            assert (row.firm_id, row.viewer_id) == (world.firm.pk, world.users["alice"].pk)
            assert row.status == served_ledger.status_for(response.status_code)
            assert row.endpoint.startswith("api:") and len(row.query_fingerprint) == 64
            assert set(row.case_ids) <= {case_pk(label) for label in VISIBLE["alice"]}
            seen.add(row.status)
    assert seen & {"ok", "not_found"}
    # An anonymous caller is shown nothing and belongs to no firm's chain: no row.
    before = last_id()
    anonymous = _ask(world.client(None), _methods(pattern)[0], _path(route, visible), {"q": "x", "name": "x"})
    assert anonymous.status_code == 401
    assert last_id() == before


def test_an_unknown_path_is_one_not_found_row(world: World) -> None:
    before = last_id()
    assert world.client("bob").get(PREFIX + "no/such/path/").status_code == 404
    row = one_new_row(before)
    assert (row.status, row.case_ids) == ("not_found", [])


def test_the_cases_recorded_are_those_the_answer_showed(world: World) -> None:
    c014, c031 = str(node("case", C014).pk), str(node("case", C031).pk)
    before = last_id()
    assert world.get("alice", f"{PREFIX}nodes/{c014}/brief/").status_code == 200
    assert one_new_row(before).case_ids == [case_pk(C014)]
    # A client's brief draws on the viewer's cases of that client only.
    client = str(node("client", NW).pk)
    before = last_id()
    brief = world.get("alice", f"{PREFIX}nodes/{client}/brief/").json()
    shown = {case_pk(entry["case"]["label"]) for entry in brief["cases"]}
    assert one_new_row(before).case_ids == sorted(shown) == [case_pk(C014)]
    # A conflict check: the cases of its matches, and never one the viewer may not open.
    before = last_id()
    matches = world.get("bob", PREFIX + "conflicts/", {"name": "Northwind"}).json()["matches"]
    assert one_new_row(before).case_ids == sorted({case_pk(m["case"]["label"]) for m in matches}) == [case_pk(C031)]
    # Search and the memory index: the cases of the hits, the cases of the index's lines.
    before = last_id()
    hits = world.get("alice", PREFIX + "search/", {"q": "lease dispute"}).json()["results"]
    assert one_new_row(before).case_ids == sorted({case_pk(h["case"]["label"]) for h in hits})
    before = last_id()
    index = world.get("alice", PREFIX + "index/").json()
    lines = Node.objects.filter(pk__in=index["case_ids"].values()).values_list("ref_id", flat=True)
    assert one_new_row(before).case_ids == sorted(lines) and lines
    # A case on the path of a 2xx (a source).
    before = last_id()
    assert world.get("bob", f"{PREFIX}cases/{c031}/sources/deadline:answer/").status_code == 200
    assert one_new_row(before).case_ids == [case_pk(C031)]


def test_record_keeps_given_case_ids_and_the_firms_case_nodes_only(world: World) -> None:
    """`record` takes case ids, case node ids, or both: each form stores the sorted, distinct case ids, and a
    node id that is not a case of the row's firm (a client node, another firm's case, an unknown id) adds nothing."""
    c014, c031 = node("case", C014), node("case", C031)
    other_firm = Firm.objects.create(slug="elsewhere", name="Elsewhere LLP")
    foreign = Node.objects.create(
        id=uuid.uuid4(), firm=other_firm, kind="case", ref_id=c014.ref_id + 10_000, label="Elsewhere's case"
    )
    strays = [str(node("client", NW).pk), str(foreign.pk), str(uuid.uuid4())]
    forms = {
        "ids": {"case_ids": [c031.ref_id, c014.ref_id, c031.ref_id]},
        "nodes": {"case_node_ids": [str(c031.pk), str(c014.pk), *strays]},
        "both": {"case_ids": [c031.ref_id], "case_node_ids": [str(c014.pk), *strays]},
        "neither": {},
    }
    stored = {}
    for form, cases in forms.items():
        before = last_id()
        served_ledger.record(
            firm_id=world.firm.pk, viewer_id=world.users["alice"].pk, endpoint="test", status="ok", query=form,
            **cases,
        )  # fmt: skip
        stored[form] = one_new_row(before).case_ids
    both = sorted([c014.ref_id, c031.ref_id])
    assert stored == {"ids": both, "nodes": both, "both": both, "neither": []}


def test_a_case_node_resolved_once_is_not_looked_up_again(world: World) -> None:
    """The first row naming a case node looks it up (within the row's firm); the next names its case without
    reading the map. A node known as another firm's case adds nothing to a row of this firm."""
    c031 = node("case", C031)
    nodes_table = Node._meta.db_table

    def row(firm_id: int) -> tuple[list[int], list[str]]:
        before = last_id()
        sent = plans.sent(lambda: served_ledger.record(
            firm_id=firm_id, viewer_id=world.users["alice"].pk, endpoint="test", status="ok", query={},
            case_node_ids=[str(c031.pk)],
        ))  # fmt: skip
        return one_new_row(before).case_ids, [statement for statement, _ in sent]

    served_ledger.case_nodes.forget([str(c031.pk)])
    first, first_sent = row(world.firm.pk)
    again, again_sent = row(world.firm.pk)
    assert first == again == [c031.ref_id]
    assert nodes_table in first_sent[0] and nodes_table not in again_sent[0] and len(again_sent) == 1
    other = Firm.objects.create(slug="elsewhere", name="Elsewhere LLP")
    assert row(other.pk)[0] == []


def test_case_node_ids_are_read_from_the_answers_structure_in_canonical_form() -> None:
    """Case nodes at any depth and the index's reference map are found; a node of another kind, a string that
    only looks like a case, and a value that is no UUID (one with a comma or a brace would split the array
    literal the INSERT is sent with) are not; any spelling of a UUID is stored in its canonical form."""
    a, b, c, d = (uuid.uuid4() for _ in range(4))
    body = {
        "name": str(d),  # an echoed string, not a node
        "matches": [{"case": {"id": str(a).upper(), "kind": "case"}, "party": {"id": str(d), "kind": "client"}}],
        "deep": ({"x": [[{"id": str(b), "kind": "case"}]]},),
        "case_ids": {"P-1": "{" + str(c) + "}", "P-2": f"{a},{d}", "P-3": 7},
    }
    assert served_ledger.case_node_ids(body, c.hex) == sorted({str(a), str(b), str(c)})
    assert served_ledger.uuid_strings([f"{a}}},{{{d}", "", None, str(b)]) == [str(b)]


def test_a_hidden_case_leaves_the_row_an_absent_one_leaves(world: World) -> None:
    hidden, absent = str(node("case", C014).pk), str(uuid.uuid4())  # C014 is alice's, not bob's
    answers = []
    for case in (hidden, absent):
        for path in (f"nodes/{case}/brief/", f"nodes/{case}/neighbors/", f"cases/{case}/sources/document:spa-v3#p1/"):
            before = last_id()
            response = world.get("bob", PREFIX + path.replace("#", "%23"))
            row = one_new_row(before)
            answers.append((path.split("/")[0], response.status_code, row.status, tuple(row.case_ids), row.endpoint))
    assert answers[:3] == answers[3:]
    assert {a[1:4] for a in answers} == {(404, "not_found", ())}
    assert case_pk(C014) not in {
        c for r in ServedRow.objects.filter(viewer_id=world.users["bob"].pk) for c in r.case_ids
    }


def test_mcp_calls_write_one_row_named_for_the_tool(world: World) -> None:
    """In process, as the MCP server runs them (graph_memory.api.mcp_server.call_endpoint)."""
    alice, c014 = world.users["alice"], str(node("case", C014).pk)
    arguments = {
        "find_nodes": {"q": "Northwind"}, "walk_neighbors": {"node_id": c014}, "get_brief": {"node_id": c014},
        "search_cases": {"q": "lease"}, "check_conflicts": {"name": "Northwind"}, "get_memory_index": {},
        "open_source": {"case_id": c014, "source_id": "document:spa-v3#p1"},
        "ask_documents": {"case_id": c014, "q": "When is the signing deadline?"},
        "file_note": {"case_id": c014, "title": "Call", "text": "Spoke to the client about the signing."},
    }  # fmt: skip
    assert set(arguments) == {t["name"] for t in tool_definitions()}
    for name, args in arguments.items():
        for call in (args, {**args, "no_such_argument": 1}):  # an answer, and an error before any view
            before = last_id()
            status, _ = call_endpoint(alice, name, call)
            row = one_new_row(before)
            assert row.endpoint == f"mcp:{name}"
            assert row.status == served_ledger.status_for(status)
    assert ServedRow.objects.get(endpoint="mcp:get_brief", status="ok").case_ids == [case_pk(C014)]


def _seal_and_verify(firm_id: int) -> served_chain.Verification:
    served_chain.seal_firm(firm_id=firm_id)
    return served_chain.verify_firm(firm_id=firm_id)


def _answers(world: World, n: int) -> None:
    for i in range(n):
        world.get("alice", PREFIX + "nodes/", {"q": f"North{i}"})


@pytest.mark.parametrize("tamper", ["edit", "edit_case", "delete_middle", "delete_last", "delete_first", "insert"])
def test_verify_finds_any_tampering(world: World, tamper: str) -> None:
    _answers(world, 5)
    firm = world.firm.pk
    good = _seal_and_verify(firm)
    assert good.ok and good.rows == 5 and good.head_seq == 5 and len(good.head_hash) == 64
    sealed = list(ServedRow.objects.filter(firm_id=firm).order_by("seq"))
    middle = sealed[2]
    if tamper == "edit":
        ServedRow.objects.filter(pk=middle.pk).update(viewer_id=world.users["bob"].pk)
    elif tamper == "edit_case":
        ServedRow.objects.filter(pk=middle.pk).update(case_ids=[case_pk(C088)])
    elif tamper == "delete_middle":
        ServedRow.objects.filter(pk=middle.pk).delete()
    elif tamper == "delete_last":
        ServedRow.objects.filter(pk=sealed[-1].pk).delete()
    elif tamper == "delete_first":
        ServedRow.objects.filter(pk=sealed[0].pk).delete()
    else:  # a forged row slipped in with the next number, its hash made without the chain's key
        ServedRow.objects.create(
            firm_id=firm, viewer_id=middle.viewer_id, endpoint="api:SearchApi", status="ok", at=timezone.now(),
            query_fingerprint="0" * 64, seq=6, prev_hash=sealed[-1].row_hash, row_hash="f" * 64,
        )  # fmt: skip
    broken = served_chain.verify_firm(firm_id=firm)
    assert not broken.ok, tamper
    out = io.StringIO()
    with pytest.raises(CommandError, match="1 firm chain"):
        call_command("memory_ledger", "verify", "--firm", str(firm), stdout=out)
    assert "BROKEN" in out.getvalue()


def test_verify_command_seals_and_prints_the_head(world: World) -> None:
    _answers(world, 3)
    out = io.StringIO()
    call_command("memory_ledger", "verify", "--seal", stdout=out)
    head = ServedChain.objects.get(firm_id=world.firm.pk)
    assert (
        f"firm {world.firm.pk}: OK, 3 sealed rows checked, 0 not sealed yet; head 3 {head.head_hash}" in out.getvalue()
    )
    # Later rows extend the chain from that head: the head kept elsewhere stays a row of it.
    _answers(world, 2)
    assert _seal_and_verify(world.firm.pk).ok
    assert ServedRow.objects.get(firm_id=world.firm.pk, seq=3).row_hash == head.head_hash


def test_prune_keeps_the_chain_verifiable_and_a_hold_stops_it(world: World, settings: Any) -> None:
    _answers(world, 4)
    old = timezone.now() - dt.timedelta(days=3000)
    first_two = list(ServedRow.objects.order_by("id").values_list("id", flat=True)[:2])
    ServedRow.objects.filter(id__in=first_two).update(at=old)  # aged before sealing: their hashes cover it
    assert _seal_and_verify(world.firm.pk).ok
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "SERVED_LEDGER_LEGAL_HOLD": True}
    assert served_chain.prune() == {}
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "SERVED_LEDGER_LEGAL_HOLD": False}
    assert served_chain.prune() == {world.firm.pk: 2}
    result = served_chain.verify_firm(firm_id=world.firm.pk)
    assert result.ok and result.rows == 2 and result.head_seq == 4


def test_what_the_memory_showed_a_user_about_a_case(world: World) -> None:
    c014, c088 = str(node("case", C014).pk), str(node("case", C088).pk)
    start = timezone.now()
    world.get("alice", f"{PREFIX}nodes/{c014}/brief/")
    world.get("alice", f"{PREFIX}nodes/{c088}/brief/")
    world.get("bob", f"{PREFIX}nodes/{c014}/brief/")  # hidden from bob: a row with no case
    end = timezone.now()
    alice = world.users["alice"].pk
    shown = served_ledger.served_rows(
        firm_id=world.firm.pk, viewer_id=alice, case_id=case_pk(C014), since=start, until=end
    )
    assert [(r.endpoint, r.case_ids) for r in shown] == [("api:NodeBriefApi", [case_pk(C014)])]
    bob = served_ledger.served_rows(firm_id=world.firm.pk, viewer_id=world.users["bob"].pk, case_id=case_pk(C014))
    assert not bob.exists()
    out = io.StringIO()
    call_command(
        "memory_ledger", "shown", "--firm", str(world.firm.pk), "--user", str(alice), "--case", str(case_pk(C014)),
        "--since", start.isoformat(), "--until", end.isoformat(), stdout=out,
    )  # fmt: skip
    lines = out.getvalue().splitlines()
    assert len(lines) == 2 and f"\t{alice}\tapi:NodeBriefApi\tok\t{case_pk(C014)}\t" in lines[1]
    with pytest.raises(CommandError, match="not an ISO date"):
        call_command("memory_ledger", "shown", "--firm", "1", "--since", "March", stdout=out)


def test_the_query_is_kept_as_a_keyed_fingerprint_only(world: World, settings: Any) -> None:
    secret = "Castell Components escrow question 7731"
    world.get("alice", PREFIX + "search/", {"q": secret})
    world.get("alice", PREFIX + "search/", {"q": secret})
    a, b = ServedRow.objects.order_by("-id")[:2]
    assert a.query_fingerprint == b.query_fingerprint
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT row_to_json(r)::text FROM {ServedRow._meta.db_table} r")
        assert not any("7731" in text or "Castell" in text for (text,) in cursor.fetchall())
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "SERVED_LEDGER_KEY": "another key"}
    world.get("alice", PREFIX + "search/", {"q": secret})
    assert ServedRow.objects.order_by("-id")[0].query_fingerprint != a.query_fingerprint


def _admin(user: User) -> HttpClient:
    User.objects.filter(pk=user.pk).update(is_staff=True)
    http = HttpClient()
    http.force_login(User.objects.get(pk=user.pk))
    return http


def test_a_firm_admin_sees_their_firms_rows_and_head_only(world: World) -> None:
    stranger = world.users["stranger"]  # admin of another firm
    _answers(world, 2)
    world.get("stranger", PREFIX + "nodes/", {"q": "x"})
    served_chain.seal_all()
    theirs = ServedRow.objects.get(firm_id=stranger.firm_id)
    ours = ServedRow.objects.filter(firm_id=world.firm.pk).first()
    dana = _admin(world.users["dana"])
    page = dana.get("/admin/graph_memory/servedrow/")
    assert page.status_code == 200
    text = page.content.decode()
    assert ServedChain.objects.get(firm_id=world.firm.pk).head_hash in text
    assert ServedChain.objects.get(firm_id=stranger.firm_id).head_hash not in text
    assert theirs.query_fingerprint[:16] not in text and ours.query_fingerprint[:16] in text
    assert dana.get(f"/admin/graph_memory/servedrow/{theirs.pk}/change/").status_code in (302, 404)
    assert dana.get(f"/admin/graph_memory/servedrow/{ours.pk}/change/").status_code == 200
    # The question form: what did the memory show alice about C014.
    world.get("alice", f"{PREFIX}nodes/{node('case', C014).pk}/brief/")
    asked = dana.get("/admin/graph_memory/servedrow/", {"viewer": world.users["alice"].pk, "case": case_pk(C014)})
    assert asked.status_code == 200 and asked.context["cl"].result_count == 1
    # Looking at memory content in admin is itself a row; looking at the ledger is not.
    before = last_id()
    summary_list = dana.get("/admin/graph_memory/casesummary/")
    assert summary_list.status_code == 200
    row = one_new_row(before)
    assert row.endpoint == "admin:casesummary" and set(row.case_ids) == set(
        Case.objects.filter(firm=world.firm).values_list("pk", flat=True)
    )
    # The health page with a case's map: a row naming that case.
    before = last_id()
    assert dana.get(reverse("admin:graph_memory_health"), {"case": case_pk(C014)}).status_code == 200
    assert (one_new_row(before).endpoint, one_new_row(before).case_ids) == ("admin:health", [case_pk(C014)])


_FAIL = f"""
CREATE FUNCTION gm_test_refuse_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'served ledger refuses rows (test)'; END $$;
CREATE TRIGGER gm_test_refuse_row BEFORE INSERT ON {ServedRow._meta.db_table}
FOR EACH ROW EXECUTE FUNCTION gm_test_refuse_row();
"""
_UNFAIL = f"DROP TRIGGER gm_test_refuse_row ON {ServedRow._meta.db_table}; DROP FUNCTION gm_test_refuse_row();"


@pytest.mark.django_db(transaction=True)
def test_no_answer_without_its_row(demo_firm: Firm, demo_users: dict[str, User], settings: Any) -> None:
    """The database itself refuses the INSERT (a trigger; nothing mocked): the answer is not given."""
    world = build_world(demo_firm, demo_users, settings)
    c014 = str(node("case", C014).pk)
    good = world.get("alice", f"{PREFIX}nodes/{c014}/brief/")
    assert good.status_code == 200 and "Northwind" in good.content.decode()
    with connection.cursor() as cursor:
        cursor.execute(_FAIL)
    try:
        for path, params in ((f"nodes/{c014}/brief/", {}), ("search/", {"q": "Northwind"}), ("index/", {})):
            refused = world.get("alice", PREFIX + path, params)
            assert refused.status_code == 503, path
            assert refused.json() == {
                "error": {"code": "unavailable", "field": None, "message": refused.json()["error"]["message"]}
            }
            assert "Northwind" not in refused.content.decode() and c014 not in refused.content.decode()
        notes = PracticeNote.objects.count()
        note = world.client("alice").post(
            f"{PREFIX}cases/{c014}/notes/", {"title": "Call", "text": "A call."}, content_type="application/json"
        )
        assert note.status_code == 503
        assert PracticeNote.objects.count() == notes  # the note rolled back with its row
        status, text = call_endpoint(world.users["alice"], "get_brief", {"node_id": c014})
        assert status == 503 and "Northwind" not in text
        status, text = call_endpoint(world.users["alice"], "get_brief", {"node_id": c014, "bad": 1})
        assert status == 503
        # The same when the row's commit does not wait for its flush: the INSERT itself still fails first.
        settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "SERVED_LEDGER_SYNCHRONOUS_COMMIT": False}
        assert world.get("alice", f"{PREFIX}nodes/{c014}/brief/").status_code == 503
    finally:
        with connection.cursor() as cursor:
            cursor.execute(_UNFAIL)
    before = last_id()
    assert world.get("alice", f"{PREFIX}nodes/{c014}/brief/").status_code == 200  # its own transaction, committed
    assert one_new_row(before).case_ids == [case_pk(C014)]


@pytest.mark.django_db(transaction=True)
def test_every_tool_over_the_mcp_client_writes_one_row(
    demo_firm: Firm, demo_users: dict[str, User], settings: Any
) -> None:
    from config.asgi import application
    from tests.api.test_mcp import UvicornThread, calls, connect

    world = build_world(demo_firm, demo_users, settings)
    plan = calls(world)["alice"]

    def closing(read: Any) -> Any:
        """`read` in a worker thread, whose connection is closed after (else it outlives the test database)."""
        try:
            return read()
        finally:
            connection.close()

    async def drive(url: str) -> list[tuple[str, int]]:
        seen = []
        async with connect(url, f"Token {world.tokens['alice']}") as client:
            for name, args in plan:
                before = await anyio.to_thread.run_sync(closing, last_id)
                await client.call_tool(name, args)
                new = await anyio.to_thread.run_sync(
                    closing,
                    lambda before=before: list(
                        ServedRow.objects.filter(id__gt=before).values_list("endpoint", "status")
                    ),
                )
                assert len(new) == 1, (name, new)
                seen.append(new[0])
        return seen

    with UvicornThread(application) as server:
        seen = anyio.run(drive, server.url + "/mcp/")
    assert [endpoint for endpoint, _ in seen] == [f"mcp:{name}" for name, _ in plan]
    assert {status for _, status in seen} == {"ok", "invalid"}
    assert all(json.dumps(r.case_ids) for r in ServedRow.objects.all())


def _sent(captured: CaptureQueriesContext) -> int:
    """How many rows went as `served_ledger.send` sends them (values as the protocol's parameters)."""
    return sum(q["sql"].startswith(served_ledger._SENT) for q in captured.captured_queries)


@pytest.mark.django_db(transaction=True)
def test_a_reads_row_is_sent_before_its_answer_and_in_before_the_answer_leaves(
    demo_firm: Firm, demo_users: dict[str, User], settings: Any
) -> None:
    """Outside a transaction (as in production; these tests' usual one takes `record`'s way), a read whose
    cases the process knows sends its row, renders its answer meanwhile, and answers once the server has
    the row. Every GET route, asked twice (the first makes its cases known): one row each time, the same
    row both times, the second sent; and the connection serves the next statement. A visible case, an
    unknown id and a malformed one, so answers and errors alike."""
    world = build_world(demo_firm, demo_users, settings)
    visible = str(node("case", C014).pk)
    asked, statuses = 0, set()
    for route, pattern in ROUTES:
        if "get" not in _methods(pattern):
            continue
        for value in (visible, str(uuid.uuid4()), "not-an-id"):
            seen = []
            for _ in range(2):
                before = last_id()
                with CaptureQueriesContext(connection) as captured:
                    response = _ask(
                        world.client("alice"), "get", _path(route, value), {"q": "Northwind", "name": "Northwind"}
                    )
                row = one_new_row(before)
                assert row.status == served_ledger.status_for(response.status_code), route
                seen.append((row.endpoint, row.status, row.case_ids, row.query_fingerprint, row.viewer_id))
            assert seen[0] == seen[1], route
            assert _sent(captured) == 1, route
            statuses.add(row.status)
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
                assert cursor.fetchone() == (1,)
        asked += 1
    assert asked >= 10  # the API's reads, not a handful
    assert {"ok", "not_found"} <= statuses


@pytest.mark.django_db(transaction=True)
def test_a_sent_row_the_database_refuses_gives_no_answer(
    demo_firm: Firm, demo_users: dict[str, User], settings: Any
) -> None:
    """Fail closed on the sending way too: the answer was rendered while the row was on its way, and the
    server's refusal replaces it by the 503; the connection is usable after."""
    world = build_world(demo_firm, demo_users, settings)
    c014 = str(node("case", C014).pk)
    assert world.get("alice", f"{PREFIX}nodes/{c014}/brief/").status_code == 200  # its case node known from now
    with connection.cursor() as cursor:
        cursor.execute(_FAIL)
    try:
        with CaptureQueriesContext(connection) as captured:
            refused = world.get("alice", f"{PREFIX}nodes/{c014}/brief/")
        assert _sent(captured) == 1
        assert refused.status_code == 503 and refused.json()["error"]["code"] == "unavailable"
        assert "Northwind" not in refused.content.decode() and c014 not in refused.content.decode()
    finally:
        with connection.cursor() as cursor:
            cursor.execute(_UNFAIL)
    before = last_id()
    assert world.get("alice", f"{PREFIX}nodes/{c014}/brief/").status_code == 200
    assert one_new_row(before).case_ids == [case_pk(C014)]


_WATCH = f"""
CREATE TABLE gm_test_commit_seen (setting text, in_note boolean);
CREATE FUNCTION gm_test_watch_commit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO gm_test_commit_seen VALUES (current_setting('synchronous_commit'), NEW.endpoint LIKE '%Note%');
    RETURN NEW;
END $$;
CREATE TRIGGER gm_test_watch_commit BEFORE INSERT ON {ServedRow._meta.db_table}
FOR EACH ROW EXECUTE FUNCTION gm_test_watch_commit();
"""
_UNWATCH = (
    f"DROP TRIGGER gm_test_watch_commit ON {ServedRow._meta.db_table}; DROP FUNCTION gm_test_watch_commit(); "
    "DROP TABLE gm_test_commit_seen;"
)


@pytest.mark.django_db(transaction=True)
def test_a_reads_row_commits_unflushed_unless_the_firm_asks_for_the_flush(
    demo_firm: Firm, demo_users: dict[str, User], settings: Any
) -> None:
    """What the row's own transaction commits with, as PostgreSQL sees it while inserting the row: `off` for a
    read by default, both ways its row goes (the INSERT sets it, for its transaction only), the session's `on` with the setting True,
    and a note's row always with the note's transaction (`on`); the next statement of the session is `on` again."""
    world = build_world(demo_firm, demo_users, settings)
    c014 = str(node("case", C014).pk)
    with connection.cursor() as cursor:
        cursor.execute(_WATCH)
    try:
        # The first names a case node the process does not know yet (`record`'s way), the second is sent.
        assert world.get("alice", f"{PREFIX}nodes/{c014}/brief/").status_code == 200
        assert world.get("alice", f"{PREFIX}nodes/{c014}/brief/").status_code == 200
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_setting('synchronous_commit')")
            assert cursor.fetchone() == ("on",)  # local to the row's transaction: the session keeps its own
        settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "SERVED_LEDGER_SYNCHRONOUS_COMMIT": True}
        assert world.get("alice", f"{PREFIX}nodes/{c014}/brief/").status_code == 200
        settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "SERVED_LEDGER_SYNCHRONOUS_COMMIT": False}
        note = world.client("alice").post(
            f"{PREFIX}cases/{c014}/notes/", {"title": "Call", "text": "A call."}, content_type="application/json"
        )
        assert note.status_code == 201
        with connection.cursor() as cursor:
            cursor.execute("SELECT setting, in_note FROM gm_test_commit_seen")
            seen = cursor.fetchall()
    finally:
        with connection.cursor() as cursor:
            cursor.execute(_UNWATCH)
    assert seen == [("off", False), ("off", False), ("on", False), ("on", True)]

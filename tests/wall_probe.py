"""The host-neutral engine of the wall proofs: every read path, every viewer, against an independent oracle.

Each host's proof (tests/contracts/test_wall_proof.py for the reference host,
tests/second_host/tests/test_wall_proof.py for the second) supplies a
builder that makes a generated world's rows (tests/wall_world.py) with its
own models and calls `run_proof`. For each world the connection map and the
case summaries are built by the real code (extractive writer; in about half
the worlds also embedded, so search ranks by meaning as well as by words);
then every viewer (every user of every firm, active or not, plus a platform
operator of no firm) calls every read path, as a service and over HTTP:
lookup, a walk from every node id in the database, the brief of every node
id, a search for every case's canary, a conflict check for every party name.
Each answer is held against the oracle (plain Python over the spec, never
`graph_memory.wall.access`):

- no canary, node id or label that belongs only to cases the viewer may not
  open appears anywhere in the answer, and every node it names is one the
  viewer reaches, with the right kind and label;
- an id the viewer cannot reach answers exactly (type and message; status,
  headers and bytes) as a random id that never existed;
- result sets, counts, `has_more` and pages of one agree with the visible data;
- nothing from another firm appears, admins included.

Nothing here names a host model or field: both hosts run the same worlds
(same seed, same generator) through the same probes.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import re
import time
import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import pytest
from django.conf import settings as django_settings
from django.db import transaction
from django.test import override_settings
from hypothesis import HealthCheck, Phase, given, seed
from hypothesis import settings as hypothesis_settings
from rest_framework.test import APIClient

from graph_memory import services
from graph_memory.api.views import MemoryApi
from graph_memory.models import CaseSummary, Edge, Node, ServedRow
from graph_memory.summaries.writers import ExtractiveWriter
from graph_memory.vectors import embeddings
from graph_memory.viewer import search
from graph_memory.viewer.memory_index import memory_index
from graph_memory.viewer.notes import note_file
from graph_memory.viewer.sources import source_get
from graph_memory.wall import access, scope, sight
from tests.wall_world import BASES, FILLER_WORD, FIRST_NAMES, Built, NodeKey, Oracle, WorldSpec, worlds

# A host's builder: the rows of one world, made with its own models (inside the example's transaction).
Build = Callable[[WorldSpec], Built]

LONG = os.environ.get("GRAPH_MEMORY_PROOF") == "long"
MAX_EXAMPLES = int(os.environ.get("GRAPH_MEMORY_PROOF_EXAMPLES") or (40 if LONG else 5))

SEED = 20261130
# Figures for docs/SECURITY.md: probes made (service calls, HTTP requests) and what the examples held.
# Leaks found are always 0 in a passing run: the first one fails the test.
PROBES: Counter[str] = Counter()
EXAMPLES: Counter[str] = Counter()
# What the fixed-seed run of MAX_EXAMPLES = 5 worlds makes, in any host whose builder follows the spec (the figures
# of docs/SECURITY.md). They change only when the generator or the probes do; the second host's proof holds
# itself to them, so the two proofs cannot drift apart unnoticed.
FIXED_SEED_FIGURES = {
    "examples": 5, "hybrid": 3, "firms": 12, "viewers": 36, "cases": 20, "nodes": 64, "service": 2697, "http": 3236,
}  # fmt: skip

# Issue 32: bodies refused before the case is looked up (graph_memory/api/parsers.py), posted to every hidden
# case and to one that never existed: the answers must be the same bytes. "oversized" is sent under a small
# DATA_UPLOAD_MAX_MEMORY_SIZE (BAD_BODY_LIMIT), so the proof does not post megabytes per case.
BAD_BODY_LIMIT = 16384  # above the deep body (10,000 bytes), below the oversized one
BAD_BODIES = {
    "deep": b"[" * 5000 + b"]" * 5000,
    "duplicate": b'{"title": "probe", "title": "again", "text": "probe"}',
    "oversized": json.dumps({"title": "probe", "text": "x" * BAD_BODY_LIMIT}).encode(),
}
UUID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _text(value: Any) -> str:
    return json.dumps(dataclasses.asdict(value), default=str, ensure_ascii=False)


class Wall:
    """One viewer in one world: the probes, and what each answer must and must not contain."""

    def __init__(self, oracle: Oracle, viewer: Any, ids: dict[NodeKey, str]) -> None:
        self.oracle, self.viewer, self.ids = oracle, viewer, ids
        self.keys = {node_id: key for key, node_id in ids.items()}
        self.reachable = oracle.reachable(viewer)
        self.visible = oracle.visible_cases(viewer)
        hidden_cases = set(oracle.case_tokens) - self.visible
        self.forbidden_tokens = [oracle.case_tokens[c] for c in hidden_cases]
        unreachable = set(ids) - self.reachable
        self.forbidden_ids = {ids[k] for k in unreachable}
        shown = [oracle.labels[k] for k in self.reachable]
        # A hidden party's label may legitimately appear inside a visible one ("Acme Corp" in "Acme Corp."),
        # or be a visible one with a full stop, which a rendered sentence adds ("Counterparty: Northwind Corp."
        # for a visible "Northwind Corp" beside a hidden "Northwind Corp."). Canaries and ids still catch those.
        self.forbidden_labels = [
            oracle.labels[k]
            for k in unreachable
            if not any(oracle.labels[k] in label or oracle.labels[k].rstrip(".") == label.rstrip(".") for label in shown)
        ]
        self.client = APIClient()
        # Signed in as the viewer; an inactive one stands for a session that outlived the deactivation.
        # (Token authentication itself is tested in tests/viewer/test_graph_reads.py; here it would only add a query a request.)
        self.client.force_authenticate(viewer)
        never = uuid.uuid4()
        self.missing_svc = {
            "walk": self.svc_error(services.node_neighbors, node_id=never),
            "brief": self.svc_error(services.node_brief, node_id=never),
        }
        self.missing_http = {
            path: self.raw(f"/api/memory/nodes/{never}/{path}/", {"limit": 3}) for path in ("neighbors", "brief")
        }
        assert self.missing_http["neighbors"] == self.missing_http["brief"]
        assert self.missing_http["neighbors"][0] == 404
        # Issue 17's reads and write, for a case that never existed.
        self.missing_svc["source"] = self.svc_error(source_get, case_node_id=never, source_id="case:header")
        self.missing_svc["note"] = self.svc_error(note_file, case_node_id=never, title="probe", text="probe")
        self.missing_http["source"] = self.raw(f"/api/memory/cases/{never}/sources/case:header/")
        self.missing_http["note"] = self.post(f"/api/memory/cases/{never}/notes/", {"title": "probe", "text": "probe"})
        assert self.missing_http["source"][:2] == self.missing_http["note"][:2] == self.missing_http["brief"][:2]
        self.missing_bad = {
            name: self.post_raw(f"/api/memory/cases/{never}/notes/", body) for name, body in BAD_BODIES.items()
        }
        assert [status for status, _, _ in self.missing_bad.values()] == [400, 400, 413], self.missing_bad

    # --- calling ----------------------------------------------------------------------------------

    def svc_error(self, service: Callable[..., Any], **kwargs: Any) -> tuple[Any, ...]:
        """What a service raises for this viewer: (type, message, args) of the `NotFound`."""
        PROBES["service"] += 1
        with pytest.raises(access.NotFound) as info:
            service(viewer=self.viewer, **kwargs)
        return type(info.value), str(info.value), info.value.args

    def svc(self, service: Callable[..., Any], *, echo: str | None = None, **kwargs: Any) -> Any:
        """A service's answer for this viewer, scanned; `echo` is input it repeats by design (a conflict check's name)."""
        PROBES["service"] += 1
        result = service(viewer=self.viewer, **kwargs)
        if echo is not None:
            assert result.name == echo
        self.scan(_text(result if echo is None else dataclasses.replace(result, name="")))
        return result

    def raw(self, path: str, params: dict[str, Any] | None = None, *, echo: str | None = None) -> tuple[int, bytes, list[Any]]:
        PROBES["http"] += 1
        response = self.client.get(path, params or {})
        text = response.content.decode()
        if echo is not None:
            body = json.loads(text)
            assert body.pop("name") == echo
            text = json.dumps(body, ensure_ascii=False)
        self.scan(text)
        return response.status_code, response.content, sorted(response.items())

    def post(self, path: str, body: dict[str, Any]) -> tuple[int, bytes, list[Any]]:
        PROBES["http"] += 1
        response = self.client.post(path, body, format="json")
        self.scan(response.content.decode())
        return response.status_code, response.content, sorted(response.items())

    def post_raw(self, path: str, body: bytes) -> tuple[int, bytes, list[Any]]:
        """A JSON body as bytes (repeated keys, deep nesting), under DATA_UPLOAD_MAX_MEMORY_SIZE = BAD_BODY_LIMIT."""
        PROBES["http"] += 1
        with override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=BAD_BODY_LIMIT):
            response = self.client.generic("POST", path, body, content_type="application/json")
        self.scan(response.content.decode())
        return response.status_code, response.content, sorted(response.items())

    def http(self, path: str, params: dict[str, Any] | None = None, *, echo: str | None = None) -> dict[str, Any]:
        status, content, _ = self.raw(path, params, echo=echo)
        assert status == 200, (path, status, content)
        body = json.loads(content)
        assert body["notice"]
        return body

    # --- checking ---------------------------------------------------------------------------------

    def scan(self, text: str) -> None:
        """Nothing that belongs only to cases this viewer may not open, and no id of a node they cannot reach."""
        for token in self.forbidden_tokens:
            assert token not in text, f"LEAK: canary {token} reached {self.viewer.username}"
        for found in UUID_RE.findall(text):
            assert found not in self.forbidden_ids, f"LEAK: node id {found} reached {self.viewer.username}"
        for label in self.forbidden_labels:
            assert label not in text, f"LEAK: label {label!r} reached {self.viewer.username}"

    def key(self, ref: Any) -> NodeKey:
        """The node a returned reference names; it must be reachable, with its true kind and label."""
        node_id, kind, label = (ref["id"], ref["kind"], ref["label"]) if isinstance(ref, dict) else (ref.id, ref.kind, ref.label)
        key = self.keys[node_id]
        assert key in self.reachable, f"LEAK: unreachable node {key} reached {self.viewer.username}"
        assert (kind, label) == (key[1], self.oracle.labels[key])
        return key

    # --- the probes -------------------------------------------------------------------------------

    def walks_and_briefs(self) -> None:
        for key, node_id in self.ids.items():
            if key not in self.reachable:
                assert self.svc_error(services.node_neighbors, node_id=node_id) == self.missing_svc["walk"]
                assert self.svc_error(services.node_brief, node_id=node_id) == self.missing_svc["brief"]
                for path in ("neighbors", "brief"):
                    assert self.raw(f"/api/memory/nodes/{node_id}/{path}/", {"limit": 3}) == self.missing_http[path]
                continue
            self.walk(key, node_id)
            self.brief(key, node_id)

    def walk(self, key: NodeKey, node_id: str) -> None:
        expected = self.oracle.neighbors(self.viewer, key)
        page = self.svc(services.node_neighbors, node_id=node_id, limit=100)
        assert self.key(page.node) == key and not page.has_more
        got = [(self.key(n.node), n.edge, self.key(n.case)) for n in page.results]
        assert sorted(got) == sorted(expected)
        first = self.svc(services.node_neighbors, node_id=node_id, limit=1)
        assert first.results == page.results[:1] and first.has_more == (len(expected) > 1)
        body = self.http(f"/api/memory/nodes/{node_id}/neighbors/", {"limit": 1})
        assert [(self.key(r["node"]), r["edge"], self.key(r["case"])) for r in body["results"]] == got[:1]
        assert body["has_more"] == (len(expected) > 1)

    def brief(self, key: NodeKey, node_id: str) -> None:
        expected = self.oracle.brief_cases(self.viewer, key)
        brief = self.svc(services.node_brief, node_id=node_id, limit=100)
        assert self.key(brief.node) == key and not brief.has_more
        assert sorted(self.key(e.case) for e in brief.cases) == sorted(expected)
        for entry in brief.cases:
            assert entry.summary and self.oracle.case_tokens[self.key(entry.case)] in entry.summary
            assert entry.case_id == self.key(entry.case)[2]
        if key[1] != "case":
            count = len(expected)
            assert f"the summaries of {count} case{'s' if count != 1 else ''} you may open" in brief.text
        body = self.http(f"/api/memory/nodes/{node_id}/brief/", {"limit": 1})
        assert len(body["cases"]) == 1 and body["has_more"] == (len(expected) > 1)
        assert self.key(body["cases"][0]["case"]) in expected

    def searches(self) -> None:
        """A search for each case's canary finds that case if the viewer may open it, and nothing else.

        Only the canary's own case holds its word, and the hybrid worlds' embedder (hashed bag-of-words
        vectors) has no calibrated similarity floor, so meaning alone qualifies no hit: in both modes
        the answer is the canary's case when it is visible, else nothing (issue 14).
        """
        # A viewer who may open nothing at all (inactive, or of no firm) is answered before any embedding.
        usable = self.viewer.is_active and self.oracle.firm_index(self.viewer) is not None
        mode = "hybrid" if self.oracle.spec.hybrid and usable else "keyword"
        for case_key, token in self.oracle.case_tokens.items():
            result = self.svc(services.search_cases, q=token, limit=5)
            got = [self.key(h.case) for h in result.results]
            assert result.mode == mode and [h.case_id for h in result.results] == [k[2] for k in got]
            body = self.http("/api/memory/search/", {"q": token, "limit": 5})
            assert [self.key(h["case"]) for h in body["results"]] == got and body["mode"] == mode
            assert got == ([case_key] if case_key in self.visible else [])
        everything = self.svc(services.search_cases, q=FILLER_WORD, limit=100)
        assert sorted(self.key(h.case) for h in everything.results) == sorted(self.visible)
        if mode == "hybrid":  # the vector ranking alone (what benchmarks measure): every visible case, nothing else
            embedder = embeddings.get_embedder()
            assert embedder is not None
            firm_id = access.viewer_firm_id(self.viewer)
            assert firm_id is not None
            vector = embeddings.embed_texts(embedder, [FILLER_WORD], firm_id=firm_id).vectors[0]
            PROBES["service"] += 1
            ranking = search.vector_ranking(viewer=self.viewer, vector=vector, model=embedder.model, depth=100)
            assert sorted(ranking.case_ids) == sorted(key[2] for key in self.visible)
        body = self.http("/api/memory/search/", {"q": f"{FILLER_WORD} account", "limit": 2})
        assert len(body["results"]) == min(2, len(self.visible))
        assert {self.key(h["case"]) for h in body["results"]} <= self.visible

    def conflicts(self) -> None:
        for name in self.oracle.party_names():
            expected = self.oracle.conflicts(self.viewer, name)
            report = self.svc(services.conflicts_check, name=name, echo=name)
            got = [(self.key(m.case), self.key(m.party), m.role) for m in report.matches]
            assert sorted(got) == sorted(expected) and len(got) == len(set(got)) and not report.has_more
            body = self.http("/api/memory/conflicts/", {"name": name}, echo=name)
            assert [(self.key(m["case"]), self.key(m["party"]), m["role"]) for m in body["matches"]] == got
            assert body["has_more"] is False

    def compounding(self) -> None:
        """Issue 17: the memory index, a source a summary cites, and filing a note, for every case of every firm.

        The index shows the visible cases and counts only them; a source opens for a visible case and
        answers the never-existing case's 404 otherwise; a note filed into a case the viewer may not
        open answers that same 404 and writes nothing (its summary's generation and flag unchanged).
        Notes are not filed into visible cases here: that would change later viewers' briefs. A body
        nested too deep, with a repeated key or over the size limit answers a hidden case exactly as it
        answers the never-existing one (issue 32).
        """
        index = self.svc(memory_index)
        assert index.cases + index.omitted == len(self.visible) and not index.truncated
        assert {self.key_of(node_id) for node_id in index.case_ids.values()} == self.visible
        for case_key in self.visible:
            assert self.oracle.case_tokens[case_key] in index.text
        body = self.http("/api/memory/index/")
        assert body["text"] == index.text and body["omitted"] == 0
        for case_key, token in self.oracle.case_tokens.items():
            node_id = self.ids[case_key]
            cited = CaseSummary.objects.get(case_id=case_key[2]).source_ids  # the probe's input, not an answer
            source_id = next((s for s in cited if s != "case:header"), "case:header")
            path = f"/api/memory/cases/{node_id}/sources/{quote(source_id, safe='')}/"
            if case_key in self.visible:
                header = self.svc(source_get, case_node_id=node_id, source_id="case:header")
                assert token in header.text or token in header.title
                self.svc(source_get, case_node_id=node_id, source_id=source_id)
                assert self.http(path)["source"]["id"] == source_id
                continue
            assert self.svc_error(source_get, case_node_id=node_id, source_id=source_id) == self.missing_svc["source"]
            assert self.raw(path) == self.missing_http["source"]
            before = CaseSummary.objects.filter(case_id=case_key[2]).values_list("generation", "stale").get()
            assert self.svc_error(note_file, case_node_id=node_id, title="probe", text=token) == self.missing_svc["note"]
            note = self.post(f"/api/memory/cases/{node_id}/notes/", {"title": "probe", "text": token})
            assert note == self.missing_http["note"]
            for name, body in BAD_BODIES.items():
                assert self.post_raw(f"/api/memory/cases/{node_id}/notes/", body) == self.missing_bad[name], name
            assert CaseSummary.objects.filter(case_id=case_key[2]).values_list("generation", "stale").get() == before

    def key_of(self, node_id: str) -> NodeKey:
        key = self.keys[node_id]
        assert key in self.reachable, f"LEAK: unreachable node {key} reached {self.viewer.username}"
        return key

    def lookups(self) -> None:
        queries = [*BASES, *FIRST_NAMES[:2], "corp", "matter", *self.oracle.case_tokens.values()]
        for q in queries:
            expected = self.oracle.lookup(self.viewer, q)
            page = self.svc(services.nodes_lookup, q=q, limit=100)
            got = [self.key(n) for n in page.results]
            assert sorted(got) == sorted(expected) and not page.has_more
            body = self.http("/api/memory/nodes/", {"q": q, "limit": 1})
            assert [self.key(n) for n in body["results"]] == got[:1] and body["has_more"] == (len(expected) > 1)


def _check_map(oracle: Oracle) -> dict[NodeKey, str]:
    """The stored map is exactly the oracle's; returns node ids by oracle key (every node of every firm)."""
    firm_index = {firm.pk: f for f, firm in enumerate(oracle.built.firms)}
    ids, labels = {}, {}
    for node_id, firm_id, kind, ref_id, label in Node.objects.values_list("id", "firm_id", "kind", "ref_id", "label"):
        key = (firm_index[firm_id], kind, ref_id)
        ids[key], labels[key] = str(node_id), label
    assert labels == oracle.labels
    stored = {
        ((firm_index[f], "case", c), kind, (firm_index[f], sk, sr), (firm_index[f], tk, tr))
        for f, c, kind, sk, sr, tk, tr in Edge.objects.values_list(
            "firm_id", "case_id", "kind", "source__kind", "source__ref_id", "target__kind", "target__ref_id"
        )
    }
    assert stored == oracle.edges
    return ids


def check_world(spec: WorldSpec, build: Build) -> None:
    """One world: `build` makes its rows with the host's models; the real code builds the memory; every viewer probes."""
    embedder = "openai" if spec.hybrid else "none"
    with override_settings(
        GRAPH_MEMORY={
            **django_settings.GRAPH_MEMORY, "EMBEDDER": embedder, "WRITER": "extractive", "OPENAI_MAX_RETRIES": 0,
            "NOTE_RATE": None,  # thousands of filing attempts; the rate has its own test (tests/viewer/test_notes.py)
        }
    ):
        _check_world(spec, build)


def _check_world(spec: WorldSpec, build: Build) -> None:
    built = build(spec)
    oracle = Oracle(built=built, spec=spec)
    for firm, cases in zip(built.firms, built.cases, strict=True):
        if spec.build_by_sync:
            for case in cases:
                services.graph_sync_case(case_id=case.pk)
        else:
            services.graph_rebuild_firm(firm_id=firm.pk)
    writer = ExtractiveWriter()
    for cases in built.cases:
        for case in cases:
            services.summarize_case(case_id=case.pk, writer=writer)
            # In production the embedding follows the save's commit; here nothing commits (see the test).
            assert not spec.hybrid or services.embed_case_summary(case_id=case.pk)
    assert not CaseSummary.objects.filter(text="").exists()
    ids = _check_map(oracle)
    # Ids that never existed, and malformed ones, as extra rows of the walk.
    viewers = [u for users in built.users for u in users] + [built.platform_operator]
    for n, viewer in enumerate(viewers):
        # A third of the viewers' reads answer from the sight (graph_memory.wall.sight: kept by the triggers as the
        # worlds were written; a no-op for firm admins and for a host without guardian), a third from the
        # cases they may open (the sight switched off), and a third as a big viewer's do, from what matches
        # with a wall probe each (the caps that keep a lawyer's conflict check and search visible-first at 1
        # case). Every way is probed in every world.
        assert sight.current() or not sight.enabled()
        ways = [{}, {"LAWYER_SIGHT": False}, {"VISIBLE_FIRST_MAX": 1, "SEARCH_EXACT_MAX": 1, "SEARCH_EXACT_SHARE": 0}]
        with override_settings(GRAPH_MEMORY={**django_settings.GRAPH_MEMORY, **ways[n % 3]}):
            wall = Wall(oracle, viewer, ids)
            for bogus in (str(uuid.uuid4()), "not-a-uuid", "0" * 40):
                for path in ("neighbors", "brief"):
                    assert wall.raw(f"/api/memory/nodes/{bogus}/{path}/", {"limit": 3}) == wall.missing_http[path]
            wall.walks_and_briefs()
            wall.searches()
            wall.conflicts()
            wall.lookups()
            wall.compounding()
    # The served ledger (issue 31): every answer above left rows naming only cases its viewer may open.
    for viewer in viewers:
        allowed = {ref for (_, kind, ref) in oracle.visible_cases(viewer) if kind == "case"}
        for endpoint, case_ids in ServedRow.objects.filter(viewer_id=viewer.pk).values_list("endpoint", "case_ids"):
            assert set(case_ids) <= allowed, f"{endpoint} recorded a case {viewer.pk} may not open: {set(case_ids) - allowed}"
            EXAMPLES["served rows"] += 1
    EXAMPLES["examples"] += 1
    EXAMPLES["hybrid"] += spec.hybrid
    EXAMPLES["firms"] += len(built.firms)
    EXAMPLES["viewers"] += len(viewers)
    EXAMPLES["cases"] += sum(len(c) for c in built.cases)
    EXAMPLES["nodes"] += len(ids)


def run_proof(
    build: Build, *, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], host: str = ""
) -> str:
    """The whole proof for one host: MAX_EXAMPLES worlds (fixed seed unless LONG), each made by `build`.

    Needs the database and a running tests/openai_server.py (the embedder of
    the hybrid worlds: hashed bag-of-words vectors over real HTTP) that the
    openai client points at. Fails at the first leak; returns the line of figures.
    """
    # Thousands of expected 404s: Django logs each one as a warning.
    monkeypatch.setattr(logging.getLogger("django.request"), "level", logging.ERROR)
    # Thousands of requests per example: the throttle has its own test (tests/viewer/test_graph_reads.py).
    monkeypatch.setattr(MemoryApi, "throttle_classes", [])
    PROBES.clear()
    EXAMPLES.clear()
    statements = _record_statements(monkeypatch)
    started = time.monotonic()

    @hypothesis_settings(
        max_examples=MAX_EXAMPLES,
        database=None,
        deadline=None,
        print_blob=True,
        # Shrinking a failing world takes minutes; the fixed-seed run reports the first failing world as
        # found (reproducible: same seed), the long run shrinks it to a minimal one.
        phases=list(Phase) if LONG else [Phase.explicit, Phase.reuse, Phase.generate],
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
    )
    @given(spec=worlds())
    def example(spec: WorldSpec) -> None:
        # Each example in a savepoint rolled back at its end: the next one starts from an empty database.
        with transaction.atomic():
            check_world(spec, build)
            transaction.set_rollback(True)

    # A fixed seed (not derandomize, which seeds from this file's source) keeps the normal run's worlds, and
    # the figures in docs/SECURITY.md, the same across edits; the long run draws fresh worlds every time.
    (example if LONG else seed(SEED)(example))()
    elapsed = time.monotonic() - started
    total = PROBES["service"] + PROBES["http"]
    report = (
        f"wall proof{f' ({host})' if host else ''}: {EXAMPLES['examples']} examples ({'long' if LONG else f'fixed seed {SEED}'}; "
        f"{EXAMPLES['hybrid']} with search by meaning), "
        f"{EXAMPLES['firms']} firms, {EXAMPLES['viewers']} viewers, {EXAMPLES['cases']} cases, {EXAMPLES['nodes']} nodes; "
        f"{total} probes ({PROBES['service']} service calls, {PROBES['http']} HTTP requests); 0 leaks; "
        f"{EXAMPLES['served rows']} served-ledger rows, none naming a case its viewer may not open; {elapsed:.1f}s"
    )
    with capsys.disabled():  # shown with or without -s (`make proof` runs without it)
        print(f"\n{report}")
    assert EXAMPLES["examples"] >= 1 and total > 0 and EXAMPLES["served rows"] > 0
    # Every statement of every declared read ran under the probes (the sighted ones where the host's grants
    # have a sight): a read the proof never reaches would be a read the proof does not prove.
    declared = {(read.name, kind) for read in scope.declared() for kind in _KINDS if getattr(read, kind) is not None}
    unproved = sorted(key for key in declared - set(statements) if key[1] != "sighted" or sight.enabled())
    with capsys.disabled():
        print(f"declared reads' statements run: {len(declared) - len(unproved)} of {len(declared)}, {sum(statements.values())} times")
    assert unproved == [], f"declared reads the wall proof never ran: {unproved}"
    return report


_KINDS = ("whole_firm", "walled", "sighted", "few")


def _record_statements(monkeypatch: pytest.MonkeyPatch) -> dict[tuple[str, str], int]:
    """Counts, per (read, kind of statement), the statements `scope` builds while the proof runs."""
    ran: dict[tuple[str, str], int] = {}
    templates = {
        id(getattr(read, kind)): (read.name, kind) for read in scope.declared() for kind in _KINDS if getattr(read, kind)
    }
    build = scope.sql

    def counted(template: str, /, **names: Any) -> Any:
        key = templates.get(id(template))
        if key is not None:
            ran[key] = ran.get(key, 0) + 1
        return build(template, **names)

    monkeypatch.setattr(scope, "sql", counted)
    return ran


def figures() -> dict[str, int]:
    """The last run's figures, keyed as FIXED_SEED_FIGURES."""
    return {**{key: EXAMPLES[key] for key in FIXED_SEED_FIGURES if key in EXAMPLES}, **PROBES}

"""Map drift (a dry run of the deterministic rebuild) and party hygiene for conflict reviews.

Map drift asks `graph.graph_drift_firm` (three statements, no write) what a
rebuild would add, relabel or remove, and which nodes no edge touches. Party
hygiene reads the firm's client and counterparty nodes once (with the cases
behind each) and finds, in Python over those rows, names that collide after
normalisation (`names.party_key`) or that the conflict check's matcher
(`names.conflict_match`) takes for one another: candidates are paired by the
deletion neighbourhood of the whole name, so no pair of distant names is ever
scored. A client of one case that is a counterparty of another is the pair a
conflict review must see.
"""

from __future__ import annotations

import itertools
import re
from collections import defaultdict
from typing import Any

from django.contrib.postgres.aggregates import ArrayAgg
from django.db.models import OuterRef, Subquery
from rapidfuzz.distance import OSA

from graph_memory import conf
from graph_memory.adapter import case_firm_attname, case_model, get_adapter
from graph_memory.lint.findings import HIGH, LOW, MEDIUM, Finding
from graph_memory.map.graph import graph_drift_firm
from graph_memory.map.names import conflict_match, conflict_query, deletions, name_edits_allowed
from graph_memory.models import Edge, LintFinding, Node

_DIGITS = re.compile(r"\d+")
RECORDS_MAX = 50  # nodes listed in one aggregated finding (the sentence gives the total)
_PARTY_KINDS = (Node.Kind.CLIENT, Node.Kind.COUNTERPARTY)


def _references(*, firm_id: int, case_ids: set[int]) -> dict[int, str]:
    if not case_ids:
        return {}
    adapter = get_adapter()
    return dict(
        case_model()
        .objects.filter(pk__in=case_ids, **{case_firm_attname(): firm_id})
        .annotate(_r=adapter.case_reference())
        .values_list("pk", "_r")
    )


def _node(row: tuple[Any, ...]) -> dict[str, Any]:
    node_id, kind, ref_id, label = row[:4]
    return {"type": "node", "id": str(node_id) if node_id else None, "kind": kind, "ref_id": ref_id, "label": label}


def _end(end: tuple[str, int] | None) -> str:
    return f"{end[0]} {end[1]}" if end else "a missing node"


def map_drift(*, firm_id: int) -> list[Finding]:
    kind = LintFinding.Kind.MAP_DRIFT
    drift = graph_drift_firm(firm_id=firm_id)
    found: list[Finding] = []
    for code, rows, severity, sentence in (
        ("node_missing", drift.nodes_missing, MEDIUM, "{n} node(s) the records call for are not in the map"),
        ("node_extra", drift.nodes_extra, MEDIUM, "{n} node(s) in the map stand for nothing the records hold"),
        ("orphan_node", drift.orphans, LOW, "{n} node(s) in the map have no edge (orphans)"),
    ):
        if rows:
            found.append(
                Finding(
                    kind, code, severity, sentence.format(n=len(rows)) + ": a rebuild of the map fixes it.",
                    records=[_node(r) for r in rows[:RECORDS_MAX]],
                )
            )  # fmt: skip
    for node_id, node_kind, ref_id, old, new in drift.nodes_relabelled:
        found.append(
            Finding(
                kind, "node_relabelled", LOW, f"The map names {node_kind} “{old}”; the records call it “{new}”.",
                records=[_node((node_id, node_kind, ref_id, old)) | {"new_label": new}],
            )
        )  # fmt: skip
    by_case: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for change, edges in (("add", drift.edges_missing), ("remove", drift.edges_extra)):
        for edge_id, case_id, edge_kind, source, target in edges:
            by_case[case_id].append({
                "type": "edge", "change": change, "id": str(edge_id) if edge_id else None, "kind": edge_kind,
                "source": list(source) if source else None, "target": list(target) if target else None,
            })  # fmt: skip
    references = _references(firm_id=firm_id, case_ids=set(by_case))
    for case_id, records in sorted(by_case.items()):
        added = sum(r["change"] == "add" for r in records)
        reference = references.get(case_id, str(case_id))
        found.append(
            Finding(
                kind, "edge_drift", MEDIUM,
                f"Case {reference}: a rebuild of the map would add {added} edge(s) and remove {len(records) - added}.",
                case_id=case_id if case_id in references else None, records=records,
            )
        )  # fmt: skip
    return found


def _spaceless_variants(key: str) -> set[str]:
    whole = key.replace(" ", "")
    return deletions(whole, name_edits_allowed(len(whole)))


def party_hygiene(*, firm_id: int) -> list[Finding]:
    """Two queries: the firm's party nodes with their cases, and the cases' references."""
    kind = LintFinding.Kind.PARTY_HYGIENE
    floor = float(conf.get("LINT_NEAR_DUPLICATE_MIN_SIMILARITY"))
    cases = (
        Edge.objects.filter(firm_id=firm_id, target_id=OuterRef("pk"))
        .order_by()
        .values("target_id")
        .annotate(ids=ArrayAgg("case_id", order_by="case_id"))
        .values("ids")
    )
    parties = list(
        Node.objects.filter(firm_id=firm_id, kind__in=_PARTY_KINDS)
        .exclude(party_key="")
        .annotate(case_ids=Subquery(cases))
        .order_by("kind", "label", "id")
        .values_list("id", "kind", "ref_id", "label", "party_key", "name_key", "case_ids")
    )
    references = _references(firm_id=firm_id, case_ids={c for p in parties for c in (p[6] or [])})

    def describe(p: tuple[Any, ...], *, first: bool = False) -> str:
        refs = ", ".join(references.get(c, "?") for c in (p[6] or [])) or "no case"
        return f"{p[1].capitalize() if first else p[1]} “{p[3]}” ({refs})"

    def record(p: tuple[Any, ...]) -> dict[str, Any]:
        return _node(p) | {"cases": list(p[6] or [])}

    found: list[Finding] = []
    seen: set[tuple[Any, Any]] = set()

    def report(a: tuple[Any, ...], b: tuple[Any, ...], why: str) -> None:
        pair = tuple(sorted((str(a[0]), str(b[0]))))
        if pair in seen:
            return
        seen.add(pair)  # type: ignore[arg-type]
        if a[1] != b[1]:
            client, other = (a, b) if a[1] == Node.Kind.CLIENT else (b, a)
            code, severity = "client_and_counterparty", HIGH
            message = (
                f"{describe(client, first=True)} and {describe(other)} {why}: "
                "a client of one case is a counterparty of another — a conflict review must see this pair."
            )
        else:
            code, severity = ("same_name", MEDIUM) if why.startswith("have the same") else ("near_duplicate", LOW)
            message = f"{describe(a, first=True)} and {describe(b)} {why}: one party recorded twice?"
        found.append(Finding(kind, code, severity, message, records=[record(a), record(b)]))

    by_key: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
    for p in parties:
        by_key[p[4]].append(p)
    for group in by_key.values():
        for a, b in itertools.combinations(group, 2):
            report(a, b, "have the same name after normalisation")
    # Near duplicates: one representative per party key, paired through shared deletion variants.
    keys = {key: group[0] for key, group in by_key.items()}
    # Two names with different numbers are two parties ("Holdings 1", "Holdings 2"), so candidates
    # are paired only within the same numbers: names numbered apart never meet.
    by_digits: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for key in keys:
        by_digits[tuple(_DIGITS.findall(key))].append(key)
    pairs: set[tuple[str, str]] = set()
    for numbered_alike in by_digits.values():
        buckets: dict[str, list[str]] = defaultdict(list)
        for key in numbered_alike:
            for variant in _spaceless_variants(key):
                buckets[variant].append(key)
        pairs |= {pair for bucket in buckets.values() for pair in itertools.combinations(sorted(bucket), 2)}
        by_words: dict[tuple[str, ...], list[str]] = defaultdict(list)
        for key in numbered_alike:
            by_words[tuple(sorted(key.split()))].append(key)
        pairs |= {pair for words in by_words.values() for pair in itertools.combinations(sorted(words), 2)}
    queries: dict[str, Any] = {}
    for key_a, key_b in sorted(pairs):
        reordered = sorted(key_a.split()) == sorted(key_b.split())
        # A cheap bound first: the matcher never accepts more than two edits over the whole name.
        if not reordered and OSA.distance(key_a.replace(" ", ""), key_b.replace(" ", ""), score_cutoff=2) > 2:
            continue
        a, b = keys[key_a], keys[key_b]
        query = queries.setdefault(key_a, conflict_query(a[3]))
        match = conflict_match(query, b[4], b[5])
        if match is None or match.kind not in ("reordered", "similar") or match.similarity < floor:
            continue
        for x, y in itertools.product(by_key[key_a], by_key[key_b]):
            report(x, y, f"are near-duplicates ({match.kind}, similarity {match.similarity:.2f})")
    return found

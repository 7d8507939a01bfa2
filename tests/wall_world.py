"""Generated firms for the wall proofs: a plain-Python spec of a world, and an oracle over it. Host-neutral.

`worlds()` is a hypothesis strategy for a `WorldSpec`: several firms, each
with users of random roles, clients and counterparties whose names collide
within and across firms ("Acme Corp." / "ACME CORPORATION" / "Acme Corp"),
cases with random owners, teams and parties, and records of every kind.
Every case carries its own canary token in every record it has (title,
description, document titles and pages, drafts, deadlines, invoice numbers,
notes), so any text of that case that reaches a response is recognisable.

Each host's proof makes the rows of a spec with its own models and returns a
`Built` (tests/contracts/test_wall_proof.py for the reference host,
tests/second_host/tests/test_wall_proof.py for the second); tests/wall_probe.py
probes every read path against the oracle.

`Oracle` answers "what may this viewer see" from the spec alone, in plain
Python: owner, team member, holder of a grant outside the team, or admin of
that firm, active, and of that firm. It never calls `graph_memory.wall.access` and
reads no host field (a user's firm is the spec's, found by row); it only
borrows the name normalisers (`names.lookup_key`, `names.party_key`), which
are not about visibility.
"""

from __future__ import annotations

import string
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from graph_memory.map.names import conflict_match, conflict_query, lookup_key, party_key

# Party names: a few bases, each written many ways, so that names collide
# (same party key) inside a firm, across firms, and between clients and counterparties.
BASES = ("Acme", "Northwind", "Müller", "O'Brien", "Globex")
FORMS = ("{b} Corp.", "{B} CORPORATION", "{b} Corp", "{b} Corporation", "The {b} Company", "{b}, Inc.", "{b} LLC",
         "{b} L.L.C.", "{b} GmbH", "{b} GmbH & Co. KG", "{b} Ltd", "{b}", "{l} corp", "{b} Holdings plc")  # fmt: skip
FIRST_NAMES = ("Ada", "Ben", "Cleo", "Dev", "Eli")
# In every case's description: a word any viewer may search for, matching exactly the cases they may open.
FILLER_WORD = "quokka"
RECORD_KINDS = ("document", "unprocessed_document", "draft", "deadline", "invoice", "note")


def canary(firm: int, case: int) -> str:
    """A unique lower-case word of fixed length per case: no canary contains another, and none is a stem of another."""
    letters = string.ascii_lowercase
    return f"zq{letters[firm]}{letters[case // 26]}{letters[case % 26]}vx"


def party_name(base: int, form: int) -> str:
    b = BASES[base]
    return FORMS[form].format(b=b, B=b.upper(), l=b.lower())


@dataclass(frozen=True)
class CaseSpec:
    owner: int  # index into the firm's users
    team: frozenset[int]
    client: int
    counterparties: frozenset[int]
    records: tuple[str, ...]  # kinds from RECORD_KINDS, each makes one record
    # The first non-owner user may also open the case without being on its team (the reference host: a
    # django-guardian group permission; the second host: a reviewer assignment).
    group_grant: bool = False


@dataclass(frozen=True)
class UserSpec:
    admin: bool
    active: bool = True


@dataclass(frozen=True)
class FirmSpec:
    users: tuple[UserSpec, ...]
    clients: tuple[tuple[int, int], ...]  # (base, form)
    counterparties: tuple[tuple[int, int], ...]
    cases: tuple[CaseSpec, ...]


@dataclass(frozen=True)
class WorldSpec:
    firms: tuple[FirmSpec, ...]
    build_by_sync: bool  # build the map case by case (graph_sync_case) instead of firm rebuilds
    hybrid: bool  # embed the summaries and search by meaning too (openai embedder against the local test server)


@st.composite
def _firm(draw: st.DrawFn, *, max_users: int, max_cases: int) -> FirmSpec:
    users = tuple(
        UserSpec(admin=draw(st.booleans()), active=draw(st.sampled_from((True, True, True, False))))
        for _ in range(draw(st.integers(1, max_users)))
    )
    names = st.tuples(st.integers(0, len(BASES) - 1), st.integers(0, len(FORMS) - 1))
    clients = tuple(draw(st.lists(names, min_size=1, max_size=3)))
    counterparties = tuple(draw(st.lists(names, min_size=0, max_size=3)))
    people = st.integers(0, len(users) - 1)
    cases = []
    for _ in range(draw(st.integers(1, max_cases))):
        cases.append(
            CaseSpec(
                owner=draw(people),
                team=frozenset(draw(st.lists(people, max_size=2))),
                client=draw(st.integers(0, len(clients) - 1)),
                counterparties=frozenset(
                    draw(st.lists(st.integers(0, len(counterparties) - 1), max_size=2)) if counterparties else []
                ),
                records=tuple(draw(st.lists(st.sampled_from(RECORD_KINDS), max_size=5))),
                group_grant=draw(st.booleans()) and len(users) > 1,
            )
        )
    return FirmSpec(users=users, clients=clients, counterparties=counterparties, cases=tuple(cases))


def worlds(*, max_firms: int = 3, max_users: int = 4, max_cases: int = 4) -> st.SearchStrategy[WorldSpec]:
    return st.builds(
        WorldSpec,
        firms=st.lists(_firm(max_users=max_users, max_cases=max_cases), min_size=2, max_size=max_firms).map(tuple),
        build_by_sync=st.booleans(),
        hybrid=st.booleans(),
    )


@dataclass
class Built:
    """The rows a host made from a spec, addressed the way the spec addresses them, and how it labels them.

    `case_label` and `lawyer_label` give the label the host's adapter puts on
    a case's and a lawyer's node; parties are labelled by their `name`.
    """

    case_label: Callable[[Any], str]
    lawyer_label: Callable[[Any], str]
    firms: list[Any] = field(default_factory=list)
    users: list[list[Any]] = field(default_factory=list)
    clients: list[list[Any]] = field(default_factory=list)
    counterparties: list[list[Any]] = field(default_factory=list)
    cases: list[list[Any]] = field(default_factory=list)
    platform_operator: Any = None


def group_member(spec: CaseSpec, user_count: int) -> int:
    return next(u for u in range(user_count) if u != spec.owner)


# --- The oracle ----------------------------------------------------------------------------------

NodeKey = tuple[int, str, int]  # (firm index, kind, host row id)


@dataclass
class Oracle:
    """What the map should hold and who may open what, from the spec and the created rows' ids only."""

    built: Built
    spec: WorldSpec
    labels: dict[NodeKey, str] = field(default_factory=dict)
    # edge: (case key, kind, source node, target node)
    edges: set[tuple[NodeKey, str, NodeKey, NodeKey]] = field(default_factory=set)
    case_tokens: dict[NodeKey, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for f, firm_spec in enumerate(self.spec.firms):
            users, cases = self.built.users[f], self.built.cases[f]
            for c, case_spec in enumerate(firm_spec.cases):
                case = cases[c]
                me = self._node(f, "case", case.pk, self.built.case_label(case))
                self.case_tokens[me] = canary(f, c)
                for u in {case_spec.owner, *case_spec.team}:
                    lawyer = self._node(f, "lawyer", users[u].pk, self.built.lawyer_label(users[u]))
                    self.edges.add((me, "works_on", lawyer, me))
                client = self.built.clients[f][case_spec.client]
                self.edges.add((me, "for_client", me, self._node(f, "client", client.pk, client.name)))
                for p in case_spec.counterparties:
                    party = self.built.counterparties[f][p]
                    self.edges.add((me, "against", me, self._node(f, "counterparty", party.pk, party.name)))

    def _node(self, firm: int, kind: str, ref: int, label: str) -> NodeKey:
        key = (firm, kind, ref)
        self.labels[key] = label
        return key

    def firm_index(self, user: Any) -> int | None:
        """The firm whose spec made this user (by row, not by any host field); None for the platform operator."""
        return next((f for f, users in enumerate(self.built.users) if any(u.pk == user.pk for u in users)), None)

    def visible_cases(self, user: Any) -> set[NodeKey]:
        """Owner, team member or group grantee of the case, or admin of its firm; active and of that firm only."""
        f = self.firm_index(user)
        if f is None or not user.is_active:
            return set()
        users, firm_spec = self.built.users[f], self.spec.firms[f]
        me = next(u for u, row in enumerate(users) if row.pk == user.pk)
        seen = set()
        for c, case_spec in enumerate(firm_spec.cases):
            by_group = case_spec.group_grant and group_member(case_spec, len(users)) == me
            if firm_spec.users[me].admin or me == case_spec.owner or me in case_spec.team or by_group:
                seen.add((f, "case", self.built.cases[f][c].pk))
        return seen

    def visible_edges(self, user: Any) -> set[tuple[NodeKey, str, NodeKey, NodeKey]]:
        cases = self.visible_cases(user)
        return {e for e in self.edges if e[0] in cases}

    def reachable(self, user: Any) -> set[NodeKey]:
        return {n for e in self.visible_edges(user) for n in e[2:]}

    def neighbors(self, user: Any, node: NodeKey) -> set[tuple[NodeKey, str, NodeKey]]:
        """(neighbour, edge kind, case) along visible edges."""
        out = set()
        for case, kind, source, target in self.visible_edges(user):
            if source == node:
                out.add((target, kind, case))
            elif target == node:
                out.add((source, kind, case))
        return out

    def brief_cases(self, user: Any, node: NodeKey) -> set[NodeKey]:
        if node[1] == "case":
            return {node} & self.visible_cases(user)
        return {case for case, _, s, t in self.visible_edges(user) if node in (s, t)}

    def lookup(self, user: Any, q: str) -> set[NodeKey]:
        key = lookup_key(q)
        return {n for n in self.reachable(user) if key and key in lookup_key(self.labels[n])}

    def conflicts(self, user: Any, name: str) -> set[tuple[NodeKey, NodeKey, str]]:
        query, roles = conflict_query(name), {"for_client": "client", "against": "counterparty"}
        return {
            (case, target, roles[kind])
            for case, kind, _, target in self.visible_edges(user)
            if kind in roles and conflict_match(query, party_key(self.labels[target])) is not None
        }

    def party_names(self) -> list[str]:
        names = {p.name for firm in self.built.clients + self.built.counterparties for p in firm}
        return sorted(names)

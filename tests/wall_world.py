"""Generated firms for the wall proof (tests/test_wall_proof.py): a plain-Python spec, the rows it makes, an oracle.

`worlds()` is a hypothesis strategy for a `WorldSpec`: several firms, each
with users of random roles, clients and counterparties whose names collide
within and across firms ("Acme Corp." / "ACME CORPORATION" / "Acme Corp"),
cases with random owners, teams and parties, and records of every kind.
Every case carries its own canary token in every record it has (title,
description, document titles and pages, drafts, deadlines, invoice numbers,
notes), so any text of that case that reaches a response is recognisable.

`Oracle` answers "what may this viewer see" from the spec alone, in plain
Python: owner, team member or admin of that firm, active, and of that firm.
It never calls `graph_memory.access`; it only borrows the name normalisers
(`names.lookup_key`, `names.party_key`), which are not about visibility.
"""

from __future__ import annotations

import datetime as dt
import string
from dataclasses import dataclass, field
from decimal import Decimal

from django.contrib.auth.models import Group
from django.utils import timezone
from hypothesis import strategies as st

from accounts.models import Firm, User
from graph_memory.names import lookup_key, party_key
from practice.models import (
    Case,
    CaseCounterparty,
    CaseTeamMember,
    Client,
    Counterparty,
    Deadline,
    Document,
    Draft,
    Invoice,
    Note,
)

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
    group_grant: bool = False  # view_case also granted to a group holding the first non-owner user


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
    """The rows made from a spec, addressed the way the spec addresses them."""

    firms: list[Firm] = field(default_factory=list)
    users: list[list[User]] = field(default_factory=list)
    clients: list[list[Client]] = field(default_factory=list)
    counterparties: list[list[Counterparty]] = field(default_factory=list)
    cases: list[list[Case]] = field(default_factory=list)
    platform_operator: User | None = None


def _records(case: Case, spec: CaseSpec, token: str, author: User) -> None:
    now = timezone.now()
    for n, kind in enumerate(spec.records):
        common = {"firm_id": case.firm_id, "case": case, "key": f"r{n}"}
        when = now - dt.timedelta(days=n)
        if kind in ("document", "unprocessed_document"):
            status = Document.Status.PROCESSED if kind == "document" else Document.Status.UPLOADED
            Document.objects.create(
                **common, title=f"Exhibit {token}", status=status, created=when,
                pages=[f"The exhibit {token} sets out the facts. Page one.", f"Schedule {token} lists the assets."],
            )  # fmt: skip
        elif kind == "draft":
            Draft.objects.create(**common, title=f"Letter {token}", created=when, text=f"Draft letter about {token}.")
        elif kind == "deadline":
            Deadline.objects.create(**common, title=f"Filing {token}", due=dt.date(2026, 12, 1 + n), done=n % 2 == 1)
        elif kind == "invoice":
            Invoice.objects.create(
                **common, number=f"INV-{token}-{n}", issued=dt.date(2026, 5, 1 + n), amount=Decimal("1250.00") + n,
                currency="USD", status=Invoice.Status.SENT,
            )  # fmt: skip
        else:
            Note.objects.create(**common, author=author, created=when, text=f"Call the client about {token}. Next steps?")


def build_world(spec: WorldSpec, *, view_case_permission: object) -> Built:
    """Create every row of the spec through the ORM, so the host's own signals keep `view_case` in sync."""
    built = Built()
    for f, firm_spec in enumerate(spec.firms):
        firm = Firm.objects.create(slug=f"wall-{f}", name=f"Wall Firm {f}")
        users = []
        for u, user_spec in enumerate(firm_spec.users):
            role = User.Role.ADMIN if user_spec.admin else User.Role.LAWYER
            name = f"{FIRST_NAMES[u % len(FIRST_NAMES)]} Vq{string.ascii_lowercase[f]}{u}x"
            users.append(
                User.objects.create(username=f"w{f}u{u}", name=name, firm=firm, role=role, is_active=user_spec.active)
            )
        clients = [
            Client.objects.create(firm=firm, key=f"c{i}", name=party_name(*n)) for i, n in enumerate(firm_spec.clients)
        ]
        parties = [
            Counterparty.objects.create(firm=firm, key=f"p{i}", name=party_name(*n))
            for i, n in enumerate(firm_spec.counterparties)
        ]
        cases = []
        for c, case_spec in enumerate(firm_spec.cases):
            token = canary(f, c)
            case = Case.objects.create(
                firm=firm, key=f"K{f}-{c}", title=f"Matter {token}", opened=dt.date(2026, 1, 15),
                description=f"Advice on {token} for the {FILLER_WORD} account.", client=clients[case_spec.client],
                owner=users[case_spec.owner],
            )  # fmt: skip
            for member in sorted(case_spec.team):
                CaseTeamMember.objects.create(firm=firm, case=case, user=users[member])
            for p in sorted(case_spec.counterparties):
                CaseCounterparty.objects.create(firm=firm, case=case, counterparty=parties[p])
            if case_spec.group_grant:
                _grant_to_group(case, users, case_spec, f, c, view_case_permission)
            _records(case, case_spec, token, users[case_spec.owner])
            cases.append(case)
        built.firms.append(firm)
        built.users.append(users)
        built.clients.append(clients)
        built.counterparties.append(parties)
        built.cases.append(cases)
    built.platform_operator = User.objects.create(username="wall-operator", is_superuser=True, is_staff=True)
    return built


def _grant_to_group(case: Case, users: list[User], spec: CaseSpec, f: int, c: int, permission: object) -> None:
    """django-guardian's group object permission: the other half of what `view_case` may come from."""
    from practice.models import CaseGroupObjectPermission

    member = group_member(spec, len(users))
    group = Group.objects.create(name=f"wall-{f}-{c}")
    users[member].groups.add(group)
    CaseGroupObjectPermission.objects.create(group=group, permission=permission, content_object=case)


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
                me = self._node(f, "case", case.pk, f"{case.key} {case.title}")
                self.case_tokens[me] = canary(f, c)
                for u in {case_spec.owner, *case_spec.team}:
                    lawyer = self._node(f, "lawyer", users[u].pk, users[u].name)
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

    def firm_index(self, user: User) -> int | None:
        return next((f for f, firm in enumerate(self.built.firms) if firm.pk == user.firm_id), None)

    def visible_cases(self, user: User) -> set[NodeKey]:
        """Owner, team member or group grantee of the case, or admin of its firm; active and of that firm only."""
        f = self.firm_index(user)
        if f is None or not user.is_active:
            return set()
        users, firm_spec = self.built.users[f], self.spec.firms[f]
        me = users.index(user)
        seen = set()
        for c, case_spec in enumerate(firm_spec.cases):
            by_group = case_spec.group_grant and group_member(case_spec, len(users)) == me
            if firm_spec.users[me].admin or me == case_spec.owner or me in case_spec.team or by_group:
                seen.add((f, "case", self.built.cases[f][c].pk))
        return seen

    def visible_edges(self, user: User) -> set[tuple[NodeKey, str, NodeKey, NodeKey]]:
        cases = self.visible_cases(user)
        return {e for e in self.edges if e[0] in cases}

    def reachable(self, user: User) -> set[NodeKey]:
        return {n for e in self.visible_edges(user) for n in e[2:]}

    def neighbors(self, user: User, node: NodeKey) -> set[tuple[NodeKey, str, NodeKey]]:
        """(neighbour, edge kind, case) along visible edges."""
        out = set()
        for case, kind, source, target in self.visible_edges(user):
            if source == node:
                out.add((target, kind, case))
            elif target == node:
                out.add((source, kind, case))
        return out

    def brief_cases(self, user: User, node: NodeKey) -> set[NodeKey]:
        if node[1] == "case":
            return {node} & self.visible_cases(user)
        return {case for case, _, s, t in self.visible_edges(user) if node in (s, t)}

    def lookup(self, user: User, q: str) -> set[NodeKey]:
        key = lookup_key(q)
        return {n for n in self.reachable(user) if key and key in lookup_key(self.labels[n])}

    def conflicts(self, user: User, name: str) -> set[tuple[NodeKey, NodeKey, str]]:
        key, roles = party_key(name), {"for_client": "client", "against": "counterparty"}
        return {
            (case, target, roles[kind])
            for case, kind, _, target in self.visible_edges(user)
            if kind in roles and party_key(self.labels[target]) == key
        }

    def party_names(self) -> list[str]:
        names = {p.name for firm in self.built.clients + self.built.counterparties for p in firm}
        return sorted(names)

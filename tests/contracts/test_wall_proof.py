"""Proof that nothing crosses the wall, in the reference host: generated firms, every read path, every viewer.

The engine is host-neutral (tests/wall_probe.py: the probes and what each
answer must and must not contain, against the oracle of tests/wall_world.py);
this module only makes each generated world's rows with `practice` and
`accounts`, through the ORM so the host's own signals keep django-guardian's
`view_case` in sync. The second host runs the same worlds through the same
probes (tests/second_host/tests/test_wall_proof.py).

The normal suite runs a fixed-seed, bounded number of examples; `make proof`
(GRAPH_MEMORY_PROOF=long) runs many more with fresh randomness. The figures
of the last run are kept in `PROBES` and `EXAMPLES`.
"""

from __future__ import annotations

import datetime as dt
import string
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.utils import timezone

from accounts.models import Firm, User
from practice.models import (
    Case,
    CaseCounterparty,
    CaseGroupObjectPermission,
    CaseTeamMember,
    Client,
    Counterparty,
    Deadline,
    Document,
    Draft,
    Invoice,
    Note,
)
from practice.permissions import view_case_permission
from tests.wall_probe import EXAMPLES, PROBES, run_proof
from tests.wall_world import FILLER_WORD, FIRST_NAMES, Built, CaseSpec, WorldSpec, canary, group_member, party_name

__all__ = ["EXAMPLES", "PROBES"]


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


def build_world(spec: WorldSpec) -> Built:
    """Create every row of the spec through the ORM, so the host's own signals keep `view_case` in sync."""
    built = Built(case_label=lambda case: f"{case.key} {case.title}", lawyer_label=lambda user: user.name)
    permission = view_case_permission()
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
                _grant_to_group(case, users, case_spec, f, c, permission)
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
    member = group_member(spec, len(users))
    group = Group.objects.create(name=f"wall-{f}-{c}")
    users[member].groups.add(group)
    CaseGroupObjectPermission.objects.create(group=group, permission=permission, content_object=case)


@pytest.mark.django_db
def test_nothing_crosses_the_wall(
    openai_server: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # openai_server: the embedder of the hybrid worlds (hashed bag-of-words vectors over real HTTP).
    run_proof(build_world, monkeypatch=monkeypatch, capsys=capsys)

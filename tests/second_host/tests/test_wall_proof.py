"""Proof that nothing crosses the wall, in the second host: the reference host's worlds, probes and oracle.

The engine (tests/wall_probe.py) and the generated worlds (tests/wall_world.py)
are the reference host's, unchanged; only the rows differ: each world is made
with `offices` and `matters`, and the wall's input is this host's
`member_case_ids` (lead or assignment), not django-guardian. A case the spec
grants to someone outside its team (the reference host's group permission)
is a reviewer assignment here: it opens the matter without putting the
reviewer on the map. The fixed-seed run must make exactly the reference
host's number of probes (wall_probe.FIXED_SEED_FIGURES).
"""

from __future__ import annotations

import datetime as dt
import string
from decimal import Decimal
from typing import Any

import pytest
from django.utils import timezone

from tests import wall_probe
from tests.second_host.matters.models import (
    Assignment,
    Bill,
    DueDate,
    Engagement,
    Filing,
    FilingPage,
    Matter,
    Memo,
    Party,
    TimeEntry,
)
from tests.second_host.offices.models import Attorney, LawOffice
from tests.wall_world import FILLER_WORD, FIRST_NAMES, Built, CaseSpec, WorldSpec, canary, group_member, party_name


def _records(matter: Matter, spec: CaseSpec, token: str, author: Attorney) -> None:
    now = timezone.now()
    for n, kind in enumerate(spec.records):
        when = now - dt.timedelta(days=n)
        if kind in ("document", "unprocessed_document"):
            state = Filing.State.PROCESSED if kind == "document" else Filing.State.RECEIVED
            filing = Filing.objects.create(matter=matter, title=f"Exhibit {token}", state=state, filed_at=when)
            pages = [f"The exhibit {token} sets out the facts. Page one.", f"Schedule {token} lists the assets."]
            for number, text in enumerate(pages, start=1):
                FilingPage.objects.create(filing=filing, number=number, text=text)
        elif kind == "draft":
            Memo.objects.create(matter=matter, kind=Memo.Kind.DRAFT, heading=f"Letter {token}", written_at=when,
                                body=f"Draft letter about {token}.", author=author)  # fmt: skip
        elif kind == "deadline":
            state = DueDate.State.MET if n % 2 == 1 else DueDate.State.PENDING
            DueDate.objects.create(matter=matter, label=f"Filing {token}", due_on=dt.date(2026, 12, 1 + n), state=state)
        elif kind == "invoice":
            bill = Bill.objects.create(matter=matter, number=f"INV-{token}-{n}", issued_on=dt.date(2026, 5, 1 + n),
                                       currency="USD", state=Bill.State.ISSUED)  # fmt: skip
            TimeEntry.objects.create(matter=matter, bill=bill, attorney=author, worked_on=dt.date(2026, 4, 30),
                                     hours=Decimal("1"), rate=Decimal("1250.00") + n, narrative=f"Work on {token}.")  # fmt: skip
        else:
            Memo.objects.create(matter=matter, kind=Memo.Kind.FILE_NOTE, written_at=when, author=author,
                                body=f"Call the client about {token}. Next steps?")  # fmt: skip


def build_world(spec: WorldSpec) -> Built:
    """Every row of the spec, through the ORM (the adapter's receivers see each one)."""
    built = Built(case_label=lambda matter: f"{matter.reference}: {matter.name}", lawyer_label=lambda a: a.full_name)
    for f, firm_spec in enumerate(spec.firms):
        office = LawOffice.objects.create(code=f"wall-{f}", display_name=f"Wall Office {f}")
        attorneys = [
            Attorney.objects.create(
                username=f"w{f}u{u}", full_name=f"{FIRST_NAMES[u % len(FIRST_NAMES)]} Vq{string.ascii_lowercase[f]}{u}x",
                office=office, manages_office=user_spec.admin, is_active=user_spec.active,
            )
            for u, user_spec in enumerate(firm_spec.users)
        ]
        clients = [Party.objects.create(office=office, name=party_name(*n)) for n in firm_spec.clients]
        adverse = [Party.objects.create(office=office, name=party_name(*n)) for n in firm_spec.counterparties]
        matters = []
        for c, case_spec in enumerate(firm_spec.cases):
            token = canary(f, c)
            matter = Matter.objects.create(
                office=office, reference=f"K{f}-{c}", name=f"Matter {token}", stage=Matter.Stage.ACTIVE,
                opened_on=dt.date(2026, 1, 15), synopsis=f"Advice on {token} for the {FILLER_WORD} account.",
                lead=attorneys[case_spec.owner],
            )  # fmt: skip
            Engagement.objects.create(matter=matter, party=clients[case_spec.client], role=Engagement.Role.CLIENT)
            for member in sorted(case_spec.team):
                Assignment.objects.create(matter=matter, attorney=attorneys[member])
            for p in sorted(case_spec.counterparties):
                Engagement.objects.create(matter=matter, party=adverse[p], role=Engagement.Role.ADVERSE)
            reviewer = group_member(case_spec, len(attorneys)) if case_spec.group_grant else None
            if reviewer is not None and reviewer not in case_spec.team:
                Assignment.objects.create(
                    matter=matter, attorney=attorneys[reviewer], capacity=Assignment.Capacity.REVIEWER
                )
            _records(matter, case_spec, token, attorneys[case_spec.owner])
            matters.append(matter)
        built.firms.append(office)
        built.users.append(attorneys)
        built.clients.append(clients)
        built.counterparties.append(adverse)
        built.cases.append(matters)
    built.platform_operator = Attorney.objects.create(username="wall-operator", is_superuser=True, is_staff=True)
    return built


@pytest.mark.django_db
def test_nothing_crosses_the_wall(
    openai_server: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # openai_server: the embedder of the hybrid worlds (hashed bag-of-words vectors over real HTTP).
    wall_probe.run_proof(build_world, monkeypatch=monkeypatch, capsys=capsys, host="second host")
    if not wall_probe.LONG and wall_probe.MAX_EXAMPLES == 5:
        assert wall_probe.figures() == wall_probe.FIXED_SEED_FIGURES  # the very probes of the reference host's run

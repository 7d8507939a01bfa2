"""The write-back guard's cost (issue 31): p50 of a note POST with the guard, beside the same POST without it.

Runs in a scratch database (`bench_note_guard`) on the embedded server, created
here and dropped at the end. One firm of 10,000 cases is written in bulk: a
filer (Lena) owns 200 of them, a teammate (Theo) is on the target case and on
20 of Lena's others, so 179 of Lena's cases are *crossing* (Theo may not open
them); the other 9,800 cases belong to other lawyers and are hidden from
both. Every case has two deadlines, an invoice, three working notes, a draft
and a stored summary. Notes are POSTed through the API (Django's test client,
token authentication) into the target case: clean ones (the target's own
facts; filed), crossing ones (a crossing case's client, amount and sentence;
refused with 409), then clean ones with the guard switched off (the cost of
filing alone), and clean ones by the firm admin (every case Theo may not open
is crossing: 9,979, the texts of the NOTE_GUARD_MAX_CASES most recent read).
Prints one markdown section.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.scratch import django_on_scratch  # noqa: E402

DB_NAME = "bench_note_guard"
CASES = 10_000
LENA_CASES = 200
SHARED = 20
POSTS = int(os.environ.get("BENCH_GUARD_POSTS", "40"))


def seed() -> dict[str, Any]:
    import datetime as dt
    from decimal import Decimal

    from django.utils import timezone

    from accounts.models import Firm, User
    from graph_memory.map.graph import graph_rebuild_firm
    from graph_memory.models import CaseSummary
    from practice.models import (
        Case,
        CaseCounterparty,
        CaseTeamMember,
        CaseUserObjectPermission,
        Client,
        Counterparty,
        Deadline,
        Draft,
        Invoice,
        Note,
    )  # fmt: skip
    from practice.permissions import view_case_permission

    firm = Firm.objects.create(slug="bench-guard", name="Bench Guard LLP")
    lena = User.objects.create(username="lena", firm=firm, name="Lena Ortiz")
    theo = User.objects.create(username="theo", firm=firm, name="Theo Marsh")
    admin = User.objects.create(username="admin", firm=firm, role=User.Role.ADMIN)
    others = User.objects.bulk_create(User(username=f"lawyer{i}", firm=firm) for i in range(50))
    clients = Client.objects.bulk_create(Client(firm=firm, key=f"c{i}", name=f"Client{i} Shipping Ltd") for i in range(CASES))
    parties = Counterparty.objects.bulk_create(
        Counterparty(firm=firm, key=f"p{i}", name=f"Party{i} Marine AB") for i in range(CASES)
    )
    opened = dt.date(2026, 1, 15)
    cases = Case.objects.bulk_create(
        Case(firm=firm, key=f"2026-{i:05d}", title=f"Matter {i} cargo claim", opened=opened,
             description=f"Cargo claim number {i}. The vessel reached port {i % 97} days late.", client=clients[i],
             owner=lena if i < LENA_CASES else others[i % 50])
        for i in range(CASES)
    )  # fmt: skip
    CaseCounterparty.objects.bulk_create(CaseCounterparty(firm=firm, case=c, counterparty=parties[i]) for i, c in enumerate(cases))
    team = [cases[0], *cases[LENA_CASES - SHARED : LENA_CASES]]  # the target and 20 more of Lena's
    CaseTeamMember.objects.bulk_create(CaseTeamMember(firm=firm, case=c, user=theo) for c in team)
    permission = view_case_permission()
    CaseUserObjectPermission.objects.bulk_create(
        [CaseUserObjectPermission(content_object=c, user_id=c.owner_id, permission=permission) for c in cases]
        + [CaseUserObjectPermission(content_object=c, user=theo, permission=permission) for c in team]
    )
    now = timezone.now()
    Deadline.objects.bulk_create(
        Deadline(firm=firm, case=c, key=f"d{n}", title=f"Filing {n}", due=opened + dt.timedelta(days=(i * 7 + n) % 900))
        for i, c in enumerate(cases) for n in (1, 2)
    )  # fmt: skip
    Invoice.objects.bulk_create(
        Invoice(firm=firm, case=c, key="inv", number=f"INV-{i:05d}", issued=opened + dt.timedelta(days=i % 700),
                amount=Decimal(10_000 + i * 37), currency="EUR", status="sent")
        for i, c in enumerate(cases)
    )  # fmt: skip
    Note.objects.bulk_create(
        Note(firm=firm, case=c, key=f"n{n}", created=now,
             text=f"Call {n} on matter {i}: the surveyor number {i} found that hold {n} of vessel {i} was flooded "
                  f"before loading, and the master of vessel {i} kept no log of the pumps for hold {n}. " * 3)
        for i, c in enumerate(cases) for n in (1, 2, 3)
    )  # fmt: skip
    Draft.objects.bulk_create(
        Draft(firm=firm, case=c, key="draft", title="Letter before action", created=now,
              text=f"Dear Sirs, we act for Client{i} Shipping Ltd in respect of cargo claim {i}. " * 20)
        for i, c in enumerate(cases)
    )  # fmt: skip
    graph_rebuild_firm(firm_id=firm.pk)
    CaseSummary.objects.bulk_create(
        [CaseSummary(case=c, firm=firm, text=f"Cargo claim {i} for Client{i} Shipping Ltd. Invoice INV-{i:05d}. " * 10,
                     stale=False, written_at=now) for i, c in enumerate(cases)],
        batch_size=2000,
    )  # fmt: skip
    return {"firm": firm, "lena": lena, "admin": admin, "target": cases[0], "crossing": cases[5]}


def run() -> None:
    from django.core.management import call_command
    from django.test import Client as HttpClient
    from rest_framework.authtoken.models import Token

    from graph_memory.models import Node, NoteRefusal
    from graph_memory.viewer import notes

    load_start = os.getloadavg()[0]
    print("migrating the scratch database ...", file=sys.stderr, flush=True)
    call_command("migrate", verbosity=0)
    print("seeding ...", file=sys.stderr, flush=True)
    world = seed()
    target = str(Node.objects.get(kind="case", ref_id=world["target"].pk).pk)
    i = 5
    crossing_text = (
        f"Client{i} Shipping Ltd accepted EUR {10_000 + i * 37:,}. The surveyor number {i} found that hold 1 of "
        f"vessel {i} was flooded before loading."
    )

    def clean(n: int) -> str:
        return f"Kept {n}: Client0 Shipping Ltd, claim 2026-00000, invoice INV-00000; the vessel reached port 0 days late."

    def posts(user: Any, texts: list[str], expect: int) -> list[float]:
        client = HttpClient(headers={"Authorization": f"Token {Token.objects.get_or_create(user=user)[0].key}"})
        times = []
        for text in texts:
            body = json.dumps({"title": "Kept", "text": text})
            started = time.perf_counter()
            response = client.post(f"/api/memory/cases/{target}/notes/", data=body, content_type="application/json")
            times.append((time.perf_counter() - started) * 1000)
            assert response.status_code == expect, (response.status_code, response.content[:300])
        return times

    posts(world["lena"], [clean(-1), clean(-2)], 201)  # warm up
    rows = [
        ("clean note by the filer (filed)", posts(world["lena"], [clean(n) for n in range(POSTS)], 201)),
        ("crossing note by the filer (refused, 409)", posts(world["lena"], [crossing_text] * POSTS, 409)),
        ("clean note by the firm admin (filed)", posts(world["admin"], [clean(n) for n in range(POSTS)], 201)),
    ]
    guard = notes.note_guard
    notes.note_guard = lambda **kwargs: None  # the same POST without the guard: what filing alone costs
    try:
        rows.append(("clean note, guard switched off", posts(world["lena"], [clean(n) for n in range(POSTS)], 201)))
    finally:
        notes.note_guard = guard
    assert NoteRefusal.objects.count() == POSTS

    import datetime as dt

    from bench.run import cpu_model

    load_end = os.getloadavg()[0]
    print("## Write-back guard\n")
    print(
        f"Measured {dt.date.today().isoformat()} on {os.cpu_count()} cores ({cpu_model()}), embedded PostgreSQL 18; "
        f"load average (1 min) at start / end: {load_start:.1f} / {load_end:.1f} (above 2: other processes shared "
        "the machine and the timings are inflated). "
        f"`POST cases/{{id}}/notes/` through the API into one case of a {CASES:,}-case firm; the filer may open "
        f"{LENA_CASES} cases, {LENA_CASES - SHARED - 1} of them crossing (the teammate on the target case may not "
        "open them), each with two deadlines, an invoice, three notes, a draft and a stored summary; the firm admin "
        f"may open all, {CASES - SHARED - 1:,} of them crossing (texts of the 500 most recent read). "
        f"{POSTS} POSTs each (`bench/bench_note_guard.py`):\n"
    )
    print("| note | p50 | p90 | max |")
    print("| --- | ---: | ---: | ---: |")
    for label, times in rows:
        ordered = sorted(times)
        p90 = ordered[int(len(ordered) * 0.9) - 1]
        print(f"| {label} | {statistics.median(times):.0f} ms | {p90:.0f} ms | {ordered[-1]:.0f} ms |")


def main() -> None:
    os.environ["GRAPH_MEMORY_EMBEDDER"] = "none"
    os.environ["GRAPH_MEMORY_NOTE_RATE"] = "1000000/hour"
    os.environ["GRAPH_MEMORY_THROTTLE_RATE"] = "1000000/min"
    with django_on_scratch(DB_NAME):
        run()


if __name__ == "__main__":
    main()

"""Summary faithfulness: planted inventions caught, true statements kept, through the real writer and verifier.

Runs in a scratch database (`bench_faithfulness`) on the embedded server,
created here and dropped at the end. The corpus is the demo firm plus
generated firms (seeded, so every run builds the same records). For each case,
bench/faithfulness_plants.py generates model answers: planted inventions of
every class in issue 12 and true statements in every format variant. Each
answer is served over real HTTP by the test suite's OpenAI-compatible server
(tests/openai_server.py) to the `openai` writer, and what it returns goes
through `verify.verify_summary`. Prints one markdown section on stdout.
"""

from __future__ import annotations

import datetime as dt
import os
import random
import sys
import time
from collections import Counter, defaultdict
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.scratch import django_on_scratch  # noqa: E402

DB_NAME = "bench_faithfulness"
SEED = 12
FIRMS = int(os.environ.get("BENCH_FAITHFULNESS_FIRMS", 3))
CASES_PER_FIRM = 10
CAUGHT_TARGET = 99.0
DROPPED_TARGET = 2.0

FIRST = ["Harlow", "Vantage", "Keswick", "Orchid", "Bramble", "Solent", "Marlow", "Quarry", "Aster", "Halden",
         "Tamsin", "Redfern", "Copeland", "Wexford", "Lindale", "Fairmont"]  # fmt: skip
SECOND = ["Freight", "Mills", "Biotech", "Capital", "Foods", "Energy", "Logistics", "Textiles", "Systems", "Realty"]
SUFFIX = ["Ltd", "GmbH", "LLC", "Inc.", "S.A.", "plc", "B.V."]
PEOPLE = ["Dana Whitlock", "Samir Qureshi", "Ingrid Solberg", "Marcus Abernathy", "Lucia Ferrante", "Tobias Renn"]
AGREEMENTS = ["Supply Agreement", "Master Services Agreement", "Share Purchase Agreement", "Lease", "Licence Agreement"]
ISSUES = ["change-of-control clause", "exclusivity undertaking", "price review mechanism", "non-compete covenant"]
STREETS = ["Harbor", "Mill", "Station", "Kings", "Orchard"]


def _company(rng: random.Random, used: set[str]) -> str:
    """A company name whose first word no other name in `used` (one case's names) starts with."""
    while True:
        name = f"{rng.choice(FIRST)} {rng.choice(SECOND)} {rng.choice(SUFFIX)}"
        if name.split()[0] not in {u.split()[0] for u in used}:
            used.add(name)
            return name


def _amount(rng: random.Random) -> tuple[str, str]:
    code = rng.choice(["USD", "EUR", "GBP", "CHF"])
    value = rng.choice([
        Decimal(rng.randrange(1, 90)) * 1_000_000, Decimal(rng.randrange(11, 49)) * 100_000,
        Decimal(rng.randrange(12, 990)) * 1_000, Decimal(rng.randrange(100_000, 9_999_999)) / 100,
    ])  # fmt: skip
    text = f"{value:,.2f}" if value % 1 else f"{value:,.0f}"
    return code, text


def _day(rng: random.Random) -> dt.date:
    return dt.date(2025, 1, 1) + dt.timedelta(days=rng.randrange(0, 900))


def _page(rng: random.Random, client: str, cp: str, third: str) -> str:
    short_c, short_o = client.split()[0], cp.split()[0]
    templates = [
        lambda: "The {a} between {c} and {o} sets a price of {m} payable on {d}.",
        lambda: "Clause {n}: either party may terminate on {k} days' notice.",
        lambda: "{so} must deliver {k} shipments per month until {d}.",
        lambda: "Annual fees are capped at {p}% of turnover.",
        lambda: "{t} holds a guarantee of {m} effective {d}.",
        lambda: "The tribunal fixed the hearing for {long}.",
        lambda: "Damages are claimed in the amount of {m}.",
        lambda: "The {a} was not signed by {o}.",
        lambda: "The witness list names {w} employees of {sc}.",
        lambda: "Escrow of {m} is held for {k} months.",
        lambda: "{sc} disputes the {i} in the {a}.",
    ]
    code, value = _amount(rng)
    day = _day(rng)
    chosen = rng.sample(templates, rng.randrange(2, 4))
    return " ".join(
        t().format(
            a=rng.choice(AGREEMENTS), c=client, o=cp, so=short_o, sc=short_c, t=third, m=f"{code} {value}",
            d=day.isoformat(), long=f"{day.day} {day:%B %Y}", n=rng.randrange(2, 30), k=rng.choice([14, 30, 60, 90]),
            p=rng.choice([3, 5, 7.5, 12]), w=rng.choice(["two", "three", "five", "twelve"]), i=rng.choice(ISSUES),
        )
        for t in chosen
    )  # fmt: skip


def generate_firms(rng: random.Random) -> list[int]:
    from django.utils import timezone

    from practice.models import Case, Invoice
    from tests.factories import (
        CaseFactory,
        ClientFactory,
        CounterpartyFactory,
        DeadlineFactory,
        DocumentFactory,
        DraftFactory,
        FirmFactory,
        InvoiceFactory,
        NoteFactory,
    )

    case_ids = []
    for f in range(FIRMS):
        firm = FirmFactory(slug=f"bench-faith-{f}", name=f"Bench Faith {f} LLP")
        for c in range(CASES_PER_FIRM):
            used: set[str] = set()
            client = ClientFactory(firm=firm, key=f"cl-{c}", name=_company(rng, used))
            cps = [CounterpartyFactory(firm=firm, key=f"cp-{c}-{k}",
                                       name=rng.choice(PEOPLE) if rng.random() < 0.2 else _company(rng, used))
                   for k in range(rng.randrange(1, 3))]  # fmt: skip
            third = _company(rng, used)
            number = rng.randrange(12, 990)
            description = (
                f"{rng.choice(['Buy-side', 'Sell-side', 'Defence', 'Claimant-side'])} counsel to {client.name} in a"
                f" dispute with {cps[0].name} over the premises at {number} {rng.choice(STREETS)} Street."
            )
            case = CaseFactory(
                firm=firm, key=f"2026-{f}{c:02d}", title=f"{client.name.split()[0]} v. {cps[0].name.split()[0]}",
                description=description, client=client, counterparties=cps, opened=_day(rng),
                status=rng.choice([Case.Status.OPEN, Case.Status.OPEN, Case.Status.CLOSED]),
            )  # fmt: skip
            base = timezone.now() - dt.timedelta(days=200)
            for d in range(rng.randrange(1, 4)):
                pages = [_page(rng, client.name, cps[0].name, third) for _ in range(rng.randrange(1, 3))]
                DocumentFactory(case=case, key=f"doc-{d}", title=rng.choice(AGREEMENTS).lower().capitalize(),
                                created=base + dt.timedelta(days=d), pages=pages)  # fmt: skip
            if rng.random() < 0.6:
                issue = rng.choice(ISSUES)
                DraftFactory(case=case, key="draft-0", title="Disclosure letter", created=base,
                             text=f"{client.name.split()[0]} discloses the {issue} against warranty "
                                  f"{rng.randrange(2, 20)}.{rng.randrange(1, 9)}.")  # fmt: skip
            code, value = _amount(rng)
            notes = [
                f"Client wants to settle before {_day(rng):%B %Y}; talks continue.",
                f"Opposing counsel proposed {code} {value} to settle.",
                f"Does the guarantee cover the {rng.choice(ISSUES)}?",
                f"HR file shows {rng.choice(['two', 'three', 'four'])} prior warnings.",
            ]
            for n, text in enumerate(rng.sample(notes, rng.randrange(1, 4))):
                NoteFactory(case=case, key=f"n{n}", text=text, created=base + dt.timedelta(days=10 + n))
            for d in range(rng.randrange(1, 4)):
                DeadlineFactory(case=case, key=f"dl-{d}", title=rng.choice(["Defence due", "Signing", "Disclosure",
                                "Expert reports", "Mediation"]) + f" {d + 1}", due=_day(rng),
                                done=rng.random() < 0.4)  # fmt: skip
            for i in range(rng.randrange(1, 3)):
                code, value = _amount(rng)
                InvoiceFactory(case=case, key=f"inv-{i}", number=f"INV-{f}{c:02d}{i}", issued=_day(rng),
                               amount=Decimal(value.replace(",", "")), currency=code,
                               status=rng.choice([Invoice.Status.SENT, Invoice.Status.PAID]))  # fmt: skip
            case_ids.append(case.pk)
    return case_ids


def _answers(planted: list[Any], rng: random.Random) -> list[tuple[dict[str, Any], list[Any]]]:
    """Pack statements into schema-valid answers (6 per section), no text twice in one answer."""
    from graph_memory.summaries import rulebook
    from graph_memory.summaries.verify import statement_key

    rng.shuffle(planted)
    answers: list[tuple[dict[str, Any], list[Any]]] = []
    for p in planted:
        key = statement_key(p.statement["text"])
        for content, members in answers:
            section = next(
                (s for s in rulebook.SECTIONS if len(content[s]) < rulebook.MAX_STATEMENTS_PER_SECTION), None
            )
            if section and key not in {statement_key(m.statement["text"]) for m in members}:
                content[section].append(p.statement)
                members.append(p)
                break
        else:
            content = rulebook.empty_content()
            content["status"].append(p.statement)
            answers.append((content, [p]))
    return answers


def main() -> None:
    os.environ["GRAPH_MEMORY_EMBEDDER"] = "none"
    with django_on_scratch(DB_NAME):
        from tests.openai_server import OpenAIServer

        server = OpenAIServer().start()
        os.environ["OPENAI_BASE_URL"], os.environ["OPENAI_API_KEY"] = server.base_url, "bench-key"
        try:
            run(server)
        finally:
            server.stop()


def run(server: Any) -> None:
    from django.core.management import call_command

    from bench.faithfulness_plants import inventions, true_statements
    from bench.run import cpu_model
    from graph_memory.summaries.context import build_context
    from graph_memory.summaries.openai_writer import OpenAIWriter
    from graph_memory.summaries.verify import verify_summary
    from practice.importer import import_firm
    from practice.models import Case
    from tests.openai_server import Reply

    print("migrating the scratch database ...", file=sys.stderr, flush=True)
    call_command("migrate", verbosity=0)
    call_command("createcachetable", verbosity=0)
    import_firm((ROOT / "demo" / "hale-ward.json").read_bytes())
    rng = random.Random(SEED)
    demo = list(Case.objects.filter(firm__slug="hale-ward").order_by("key").values_list("pk", flat=True))
    print("generating firms ...", file=sys.stderr, flush=True)
    generated = generate_firms(rng)
    party_words = defaultdict(list)
    for case in Case.objects.select_related("client").prefetch_related("counterparties"):
        names = [case.client.name, *(cp.name for cp in case.counterparties.all())]
        party_words[case.firm_id].extend(n.split()[0] for n in names)

    writer = OpenAIWriter()
    totals: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)  # (kind, label) -> {"n", "dropped", reasons}
    calls = 0
    started = time.perf_counter()
    for case_id in demo + generated:
        context = build_context(case_id=case_id)
        own = {n.split()[0] for n in context.party_names}
        others = [w for w in party_words[context.firm_id] if w not in own]
        planted = list(inventions(context, rng, others)) + list(true_statements(context, rng))
        for content, members in _answers(planted, rng):
            server.add_chat(Reply.json(content))
            result = writer.write(context)
            calls += 1
            dropped = {d["text"]: d["reason"] for d in verify_summary(result.content, context).report["dropped"]}
            for p in members:
                tally = totals[(p.kind, p.label)]
                tally["n"] += 1
                text = " ".join(p.statement["text"].split())
                if text in dropped:
                    tally["dropped"] += 1
                    tally[f"reason:{dropped[text]}"] += 1
                if (text in dropped) == (p.kind == "true") and os.environ.get("BENCH_FAITHFULNESS_VERBOSE"):
                    print(f"{p.kind} {p.label}: {p.statement} -> {dropped.get(text, 'kept')}", file=sys.stderr)
    seconds = time.perf_counter() - started

    def reasons(tally: Counter[str]) -> str:
        top = sorted(((v, k[7:]) for k, v in tally.items() if k.startswith("reason:")), reverse=True)[:3]
        return ", ".join(f"{name} {count}" for count, name in top) or "—"

    n_cases = len(demo) + len(generated)
    print("## Summary faithfulness\n")
    print(
        f"Measured {dt.date.today().isoformat()} on {os.cpu_count()} cores ({cpu_model()}). Corpus: the demo firm "
        f"({len(demo)} cases) and {FIRMS} generated firms ({len(generated)} cases; seed {SEED}). For each case "
        "`bench/faithfulness_plants.py` generates statements from the case's own slice: inventions of every class "
        "of issue 12, each with a real quote of a real record, and true statements (a record's sentence as its "
        "quote) in every format variant. They were packed into "
        f"{calls:,} model answers, served over HTTP by `tests/openai_server.py` to the `openai` writer and verified "
        f"by `verify.verify_summary` ({seconds:.1f} s, {n_cases} cases). Quote coverage threshold: "
        f"{_coverage()}. The true statements are a record's own sentences in other formats; free paraphrase is "
        "not measured here, and the coverage rule drops more of it (the model is told to stay close to its quote).\n"
    )
    print("| class of invention | planted | caught | caught % | caught by (top reasons) |")
    print("| --- | ---: | ---: | ---: | --- |")
    worst_caught, worst_dropped = 100.0, 0.0
    for (kind, label), tally in sorted(totals.items()):
        if kind == "invention":
            share = 100 * tally["dropped"] / tally["n"]
            worst_caught = min(worst_caught, share)
            print(f"| {label} | {tally['n']:,} | {tally['dropped']:,} | {share:.1f}% | {reasons(tally)} |")
    print("\n| true statement, format variant | statements | wrongly dropped | dropped % | reasons |")
    print("| --- | ---: | ---: | ---: | --- |")
    for (kind, label), tally in sorted(totals.items()):
        if kind == "true":
            share = 100 * tally["dropped"] / tally["n"]
            worst_dropped = max(worst_dropped, share)
            print(f"| {label} | {tally['n']:,} | {tally['dropped']:,} | {share:.1f}% | {reasons(tally)} |")
    met = worst_caught >= CAUGHT_TARGET and worst_dropped <= DROPPED_TARGET
    print(
        f"\nTarget (every class caught at >= {CAUGHT_TARGET:.0f}%, every true variant dropped at <= "
        f"{DROPPED_TARGET:.0f}%): {'met' if met else 'NOT met'}; worst class caught {worst_caught:.1f}%, worst "
        f"variant dropped {worst_dropped:.1f}%."
    )


def _coverage() -> str:
    from graph_memory import conf

    return f"{float(conf.get('SUMMARY_MIN_QUOTE_COVERAGE')):.2f}"


if __name__ == "__main__":
    main()

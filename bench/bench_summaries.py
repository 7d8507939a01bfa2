"""Case summaries: context size per case, the 500-document cap, and verification time.

Runs in a scratch database (`bench_summaries`) on the embedded server, created
here and dropped at the end; dev and test data are never touched. Prints one
markdown section on stdout.
"""

from __future__ import annotations

import datetime as dt
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.scratch import django_on_scratch  # noqa: E402

DB_NAME = "bench_summaries"
VERIFY_REPEATS = 200


def generated_case_with_500_documents() -> int:
    from django.utils import timezone

    from practice.models import Case, Document
    from tests.factories import (
        CaseFactory,
        CounterpartyFactory,
        DeadlineFactory,
        FirmFactory,
        InvoiceFactory,
        NoteFactory,
    )

    firm = FirmFactory(slug="bench-big", name="Bench Big LLP")
    case = CaseFactory(
        firm=firm, key="2026-500", description="A large matter. " * 200,
        counterparties=[CounterpartyFactory(firm=firm) for _ in range(12)],
    )  # fmt: skip
    base = timezone.now() - dt.timedelta(days=500)
    page = "The parties agree that the fee of USD 12,500.00 is due on 2026-06-30 under clause 4.2. " * 20
    Document.objects.bulk_create(
        Document(
            case=case, firm=firm, key=f"doc-{i:03d}", title=f"Production volume {i}", status=Document.Status.PROCESSED,
            created=base + dt.timedelta(hours=i), pages=[f"Page {p}. {page}" for p in range(1, 6)],
        )
        for i in range(500)
    )  # fmt: skip
    for i in range(12):
        DeadlineFactory(case=case, key=f"dl-{i}")
        InvoiceFactory(case=case, key=f"inv-{i}")
        NoteFactory(case=case, key=f"note-{i}", text="Working note text. " * 100)
    return Case.objects.get(pk=case.pk).pk


def main() -> None:
    os.environ.pop("OPENAI_API_KEY", None)  # the extractive writer: no model calls in a benchmark
    # Embedding on `summary_saved` is measured by the search benchmark, not here.
    os.environ["GRAPH_MEMORY_EMBEDDER"] = "none"
    with django_on_scratch(DB_NAME):
        run()


def run() -> None:
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from graph_memory import conf
    from graph_memory.summaries.context import build_context
    from graph_memory.summaries.rewrite import summarize_case
    from graph_memory.summaries.verify import verify_summary
    from graph_memory.summaries.writers import ExtractiveWriter
    from practice.importer import import_firm
    from practice.models import Case

    print("migrating the scratch database ...", file=sys.stderr, flush=True)
    call_command("migrate", verbosity=0)
    import_firm((ROOT / "demo" / "hale-ward.json").read_bytes())
    cases = [(f"hale-ward {c.key}", c.pk) for c in Case.objects.filter(firm__slug="hale-ward").order_by("key")]
    print("generating a case with 500 documents ...", file=sys.stderr, flush=True)
    cases.append(("generated, 500 documents", generated_case_with_500_documents()))

    rows = []
    for label, case_id in cases:
        with CaptureQueriesContext(connection) as queries:
            started = time.perf_counter()
            context = build_context(case_id=case_id)
            build_ms = (time.perf_counter() - started) * 1000
        content = ExtractiveWriter().write(context).content
        timings = []
        for _ in range(VERIFY_REPEATS):
            started = time.perf_counter()
            result = verify_summary(content, context)
            timings.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        summarize_case(case_id=case_id, writer=ExtractiveWriter())
        end_to_end_ms = (time.perf_counter() - started) * 1000
        rows.append(
            (
                label, len(context.items), context.omitted, context.char_count, context.approx_tokens, len(queries),
                build_ms, result.report["counts"]["statements"], result.kept, statistics.median(timings),
                max(timings), end_to_end_ms,
            )
        )  # fmt: skip

    cap = conf.get("CONTEXT_MAX_CHARS")
    print("## Case summaries\n")
    print(
        f"Context slice per case (caps: {cap} characters in all, {conf.get('CONTEXT_ITEM_MAX_CHARS')} per item, "
        f"{conf.get('CONTEXT_MAX_DOCUMENTS')} documents x {conf.get('CONTEXT_MAX_PAGES_PER_DOCUMENT')} pages). "
        "Tokens are approximate: characters / 4, rounded up. Verification time is the median (and worst) of "
        f"{VERIFY_REPEATS} runs over the extractive writer's summary; end-to-end is one `summarize_case` with the "
        "extractive writer (context, write, verify, save; embedding off).\n"
    )
    print(
        "| case | items | items left out | characters | ~tokens | queries | build ms | statements | kept "
        "| verify ms (median / max) | end-to-end ms |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(
            f"| {r[0]} | {r[1]} | {r[2]} | {r[3]:,} | {r[4]:,} | {r[5]} | {r[6]:.1f} | {r[7]} | {r[8]} "
            f"| {r[9]:.2f} / {r[10]:.2f} | {r[11]:.0f} |"
        )
    big = rows[-1]
    verdict = "within" if big[3] <= cap else "OVER"
    print(
        f"\nThe generated case (500 processed documents of 5 pages, 12 notes, deadlines and invoices) gives "
        f"{big[3]:,} characters: {verdict} the {cap:,}-character cap, with {big[2]} items left out, "
        f"in the same {big[5]} queries as the smallest case."
    )


if __name__ == "__main__":
    main()

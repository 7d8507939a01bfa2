"""Stale too long, weak summaries, search gaps: read from the summary rows, a few queries per firm."""

from __future__ import annotations

import datetime as dt

from django.db.models import Exists, OuterRef, Q, Subquery
from django.utils import timezone

from graph_memory import conf
from graph_memory.adapter import case_firm_attname, case_model, get_adapter
from graph_memory.lint.findings import HIGH, LOW, MEDIUM, Finding
from graph_memory.lint.statements import summaries_with_reference
from graph_memory.models import CaseSummary, LintFinding, RefreshRun
from graph_memory.vectors.embeddings import configured_model


def _nights(since: dt.datetime, now: dt.datetime) -> int:
    return max((now - since).days, 0)


def stale_too_long(*, firm_id: int) -> list[Finding]:
    """Cases flagged stale for more than LINT_STALE_NIGHTS nights, with why; cases with records and no summary.

    Three queries: the long-stale summaries, the firm's last refresh run (was
    it stopped by the token budget?), and the cases never summarised.
    """
    kind, nights = LintFinding.Kind.STALE, int(conf.get("LINT_STALE_NIGHTS"))
    now = timezone.now()
    cutoff = now - dt.timedelta(days=nights)
    rows = (
        summaries_with_reference(firm_id=firm_id, written_only=False)
        .filter(stale=True, stale_since__lt=cutoff)
        .values_list("case_id", "reference", "stale_since", "attempts", "next_attempt_after", "last_error", "text")
    )
    last_run = RefreshRun.objects.filter(firm_id=firm_id).order_by("-started_at", "-id").first()
    budget = conf.get("NIGHTLY_TOKEN_BUDGET")
    over_budget = budget is not None and last_run is not None and last_run.tokens_used >= budget
    found = []
    for case_id, reference, since, attempts, next_after, error, text in rows:
        never = "" if text else " and has never been summarised"
        age = f"Case {reference} has been stale for {_nights(since, now)} nights{never}"
        records = [{"type": "summary", "id": case_id}]
        if attempts and next_after is not None and next_after > now:
            code, why = (
                "backing_off",
                f"backing off after {attempts} failed rewrites until {next_after:%Y-%m-%d} ({error or 'no error recorded'})",
            )
        elif attempts:
            code, why = "failing", f"its last {attempts} rewrites failed ({error or 'no error recorded'})"
        elif over_budget:
            code, why = "over_budget", f"the nightly run stops at its token budget ({budget} tokens) before reaching it"
        else:
            code, why = "not_reached", "no nightly run has reached it (batch size or no run scheduled)"
        found.append(
            Finding(kind, code, HIGH if attempts else MEDIUM, f"{age}: {why}.", case_id=case_id, records=records)
        )

    adapter = get_adapter()
    written = CaseSummary.objects.filter(case_id=OuterRef("pk")).exclude(text="")
    # A flagged case awaits the nightly run: reported above once it has waited too long.
    flagged = CaseSummary.objects.filter(case_id=OuterRef("pk"), stale=True)
    unsummarised = (
        case_model()
        .objects.filter(**{case_firm_attname(): firm_id})
        .annotate(_reference=adapter.case_reference(), _activity=adapter.case_activity())
        .filter(~Exists(written), ~Exists(flagged), _activity__lt=cutoff)
        .order_by("pk")
        .values_list("pk", "_reference")
    )
    for case_id, reference in unsummarised:
        found.append(
            Finding(
                kind, "no_summary", HIGH,
                f"Case {reference} has had activity for more than {nights} nights and has no summary, "
                "and nothing flags it: the nightly run will not write one (mark it stale).",
                case_id=case_id, records=[{"type": "case", "id": case_id}],
            )
        )  # fmt: skip
    return found


def weak_summaries(*, firm_id: int) -> list[Finding]:
    """Summaries whose verification dropped more than LINT_WEAK_DROPPED_SHARE of what the writer gave (the
    sentence ids it selected; an older summary's written statements), or that serve fewer than
    LINT_WEAK_MIN_STATEMENTS selected statements for a case of at least LINT_WEAK_MANY_RECORDS records.
    One query (the record count is the adapter's expression, embedded)."""
    kind = LintFinding.Kind.WEAK
    share, least, many = (
        float(conf.get("LINT_WEAK_DROPPED_SHARE")), int(conf.get("LINT_WEAK_MIN_STATEMENTS")),
        int(conf.get("LINT_WEAK_MANY_RECORDS")),
    )  # fmt: skip
    adapter = get_adapter()
    count = adapter.case_record_count()
    rows = summaries_with_reference(firm_id=firm_id)
    if count is not None:
        records = case_model().objects.filter(pk=OuterRef("case_id")).annotate(_n=count).values("_n")
        rows = rows.annotate(record_count=Subquery(records))
    found = []
    fields = ["case_id", "reference", "verification", *(["record_count"] if count is not None else [])]
    for row in rows.values(*fields):
        counts = (row["verification"] or {}).get("counts", {})
        if "ids" in counts:  # summary-v3: a selection of sentence ids
            written, kept = counts.get("ids", 0), counts.get("statements", 0)
            dropped, what = written - counts.get("ids_kept", 0), "sentence ids selected (unknown or repeated)"
        else:  # an older summary's written statements
            written, dropped, kept = counts.get("statements", 0), counts.get("dropped", 0), counts.get("kept", 0)
            what = "statements written"
        case, ref = row["case_id"], [{"type": "summary", "id": row["case_id"]}]
        if written and dropped / written > share:
            found.append(Finding(
                kind, "many_dropped", MEDIUM,
                f"Case {row['reference']}: verification dropped {dropped} of the {written} {what} "
                f"({dropped / written:.0%}, more than {share:.0%}).",
                case_id=case, records=ref,
            ))  # fmt: skip
        n = row.get("record_count")
        if n is not None and n >= many and kept < least:
            found.append(Finding(
                kind, "few_statements", LOW,
                f"Case {row['reference']} holds {n} records but its summary keeps {kept} written statements "
                f"(fewer than {least}).",
                case_id=case, records=ref,
            ))  # fmt: skip
    return found


def search_gaps(*, firm_id: int) -> list[Finding]:
    """Summaries without an embedding of the configured model (none, or an old model's). One query;
    nothing when no embedder is configured (search is by words then, and that is not a gap)."""
    model = configured_model()
    if model is None:
        return []
    kind = LintFinding.Kind.SEARCH_GAP
    rows = (
        summaries_with_reference(firm_id=firm_id)
        .filter(Q(embedding__isnull=True) | ~Q(embedding_model=model))
        .annotate(has_vector=Q(embedding__isnull=False))
        .values_list("case_id", "reference", "embedding_model", "has_vector")
    )
    found = []
    for case_id, reference, old, has_vector in rows:
        records = [{"type": "summary", "id": case_id}]
        if has_vector:
            message = f"Case {reference}: its summary's embedding is from {old or 'an unnamed model'}, not {model}."
            found.append(Finding(kind, "old_model", LOW, message, case_id=case_id, records=records))
        else:
            message = f"Case {reference}: its summary has no embedding, so search finds it by words only."
            found.append(Finding(kind, "no_embedding", MEDIUM, message, case_id=case_id, records=records))
    return found

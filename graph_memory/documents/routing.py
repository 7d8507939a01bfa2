"""Building, storing and refreshing the routing index of one document.

The rules are the summaries' rules: a change flags the index (one SQL
statement, `mark_documents_stale`, from the adapter's `Changes.documents`);
the nightly run rebuilds flagged indexes of one firm, oldest first, at most
NIGHTLY_DOCUMENT_BATCH_SIZE, within what is left of NIGHTLY_TOKEN_BUDGET; a
document asked about before it has any index gets one on the spot
(`ensure_indexes`, offline, so the asker waits for no model), and stays
flagged so the nightly run rebuilds it with the model when one is configured.
Nothing here reasons about viewers.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import DatabaseError, connection, transaction
from django.db.models import Case as SqlCase
from django.db.models import F, Q, Sum, Value, When
from django.utils import timezone

from graph_memory import conf
from graph_memory.adapter import DocumentRef, case_firm_attname, case_firm_column, case_model, get_adapter
from graph_memory.consent.exclusions import case_excluded, excluded_sql
from graph_memory.documents import model as prompts
from graph_memory.documents.offline import Section, build_offline, section_text
from graph_memory.documents.terms import TermCheck
from graph_memory.models import AICall, DocumentIndex
from graph_memory.plumbing.ai_calls import log_model_calls
from graph_memory.plumbing.stmt import sql
from graph_memory.summaries.base import ModelCall, WriterError
from graph_memory.summaries.writers import get_writer

logger = logging.getLogger(__name__)
ERROR_MAX = 500


class IndexFailed(Exception):
    """No index was saved; the previous one (if any) stands. `reason` holds no document text."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Built:
    sections: list[Section]
    report: dict[str, Any]
    builder: str
    model: str = ""
    tokens: int = 0


# --- flag now -----------------------------------------------------------------------------------


def mark_documents_stale(*, documents: Iterable[tuple[int, str]]) -> int:
    """Flag the routing index of each (case id, document key) as out of date. One SQL statement.

    A document without an index row gets one (empty, firm taken from the case); each flagged
    row's `generation` goes up by one. Pairs naming a case that does not exist, or one excluded from
    the memory (consent), are ignored.
    """
    pairs = sorted({(int(case_id), str(key)) for case_id, key in documents})
    if not pairs:
        return 0
    q = connection.ops.quote_name
    meta = case_model()._meta
    table = q(DocumentIndex._meta.db_table)
    firm_column = q(case_firm_column())
    # ON CONFLICT: insert-or-update in one statement, no read-then-write race (as refresh/marking.py).
    statement = sql(
        f"INSERT INTO {table} (case_id, firm_id, document_key, title, page_count, sections, report, builder, model, "
        "built_generation, stale, stale_since, generation, attempts, last_error) "
        f"SELECT c.{q(meta.pk.column)}, c.{firm_column}, v.key, '', 0, '[]'::jsonb, '{{}}'::jsonb, '', '', 0, TRUE, "
        "now(), 1, 0, '' "
        f"FROM unnest(%(cases)s::bigint[], %(keys)s::text[]) AS v(case_id, key) JOIN {q(meta.db_table)} c "
        f"ON c.{q(meta.pk.column)} = v.case_id WHERE NOT {excluded_sql('c')} ORDER BY v.case_id, v.key "
        "ON CONFLICT (case_id, document_key) DO UPDATE SET stale = TRUE, "
        f"generation = {table}.generation + 1, "
        f"stale_since = CASE WHEN {table}.stale THEN COALESCE({table}.stale_since, now()) ELSE now() END",
        cases=[c for c, _ in pairs], keys=[k for _, k in pairs],
    )
    with connection.cursor() as cursor:
        return statement.execute(cursor).rowcount


# --- build ----------------------------------------------------------------------------------------


def _sizes() -> tuple[int, int]:
    return int(conf.get("DOCUMENT_SECTION_MAX_PAGES")), int(conf.get("DOCUMENT_TERMS_PER_SECTION"))


def build_sections_offline(pages: Sequence[str]) -> Built:
    max_pages, per_section = _sizes()
    sections = build_offline(pages, max_pages=max_pages, terms_per_section=per_section)
    check = TermCheck.of(pages)
    for section in sections:
        text = section_text(pages, section.first_page, section.last_page)
        section.terms = check.keep(section.id, section.terms, text, limit=per_section)
    return Built(sections, check.report(), DocumentIndex.Builder.EXTRACTIVE)


def _model_sections(writer: Any, *, key: str, pages: Sequence[str], firm_id: int, case_id: int) -> Built:
    """Sections proposed by the model over bounded batches of pages; every term checked on its pages."""
    batch = int(conf.get("DOCUMENT_INDEX_BATCH_PAGES"))
    max_pages, per_section = _sizes()
    check = TermCheck.of(pages)
    sections: list[Section] = []
    tokens = 0
    seen: dict[str, int] = {}
    for start in range(1, len(pages) + 1, batch):
        end = min(start + batch - 1, len(pages))
        try:
            result = prompts.index_batch(writer, key=key, pages=[(n, pages[n - 1]) for n in range(start, end + 1)])
        except WriterError as exc:
            _log(exc.calls, firm_id=firm_id, case_id=case_id, outcome=AICall.Outcome.ERROR, error=exc.reason)
            raise IndexFailed(f"pages {start}-{end}: {exc.reason}") from None
        tokens += result.tokens_in + result.tokens_out
        before = check.report()
        for proposed in result.content["sections"]:
            first, last = int(proposed["first_page"]), int(proposed["last_page"])
            # A page range outside this batch is not what the model was shown: clamp it to the batch.
            first, last = min(max(first, start), end), min(max(last, start), end)
            first, last = min(first, last), max(first, last)
            last = min(last, first + max_pages - 1)
            title = " ".join(str(proposed["title"]).split())[:120] or f"Pages {first}\u2013{last}"
            base = _slug_id(title, first)
            terms = check.keep(base, proposed["terms"], section_text(pages, first, last), limit=per_section)
            sections.append(Section(base, title, first, last, terms, str(proposed["covers"])[:240]))
        after = check.report()
        counts = {k: int(after[k]) - int(before[k]) for k in ("proposed", "kept", "dropped")}  # type: ignore[call-overload]
        _log(result.calls, firm_id=firm_id, case_id=case_id, outcome=AICall.Outcome.OK, error="", report=counts)
    if not sections:
        raise IndexFailed("the model proposed no section")
    sections.sort(key=lambda s: (s.first_page, s.last_page))
    sections = _merge_across_batches(sections, max_pages=max_pages, limit=per_section)
    for section in sections:
        seen[section.id] = seen.get(section.id, 0) + 1
        if seen[section.id] > 1:
            section.id = f"{section.id}-{seen[section.id]}"
    return Built(sections, check.report(), DocumentIndex.Builder.OPENAI, getattr(writer, "model", ""), tokens)


def _merge_across_batches(sections: list[Section], *, max_pages: int, limit: int) -> list[Section]:
    """One section that a batch boundary cut in two (same title, adjacent pages) is one section again.

    Its terms stay verified: each was found on pages that the merged range contains."""
    merged: list[Section] = []
    for section in sections:
        previous = merged[-1] if merged else None
        if (previous is not None and previous.title == section.title
                and section.first_page == previous.last_page + 1
                and section.last_page - previous.first_page < max_pages):  # fmt: skip
            previous.last_page = section.last_page
            previous.terms = list(dict.fromkeys([*previous.terms, *section.terms]))[:limit]
        else:
            merged.append(section)
    return merged


def _slug_id(title: str, first_page: int) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", title.casefold()).strip("-")[:40]
    return slug or f"p{first_page}"


def _log(calls: tuple[ModelCall, ...], *, firm_id: int, case_id: int, outcome: str, error: str,
         report: dict[str, Any] | None = None) -> None:  # fmt: skip
    log_model_calls(
        calls, firm_id=firm_id, case_id=case_id, purpose=AICall.Purpose.DOCUMENT_INDEX, writer_name="openai",
        outcome=outcome, error=error, report=report,
    )  # fmt: skip


def build_document_index(*, case_id: int, key: str, writer: Any = None, offline: bool = False) -> DocumentIndex | None:
    """Build and save the index of the case's processed document `key`; None if there is no such document
    (its index row, if any, is deleted: the document went or is no longer processed).

    Promises: only terms literally found in their section's pages are saved; a failed model build saves
    nothing but the error (the previous index stands, the flag stays up) and raises `IndexFailed`; every
    model attempt is an AICall (purpose document_index); a change that lands during the build keeps the
    index stale. A case excluded from the memory (consent) raises `IndexFailed` and nothing is read or saved.
    """
    if case_excluded(case_id=case_id):
        raise IndexFailed("case excluded from the memory")
    adapter = get_adapter()
    ref = next((d for d in adapter.case_documents(case_id=case_id) if d.key == key), None)
    if ref is None:
        DocumentIndex.objects.filter(case_id=case_id, document_key=key).delete()
        return None
    firm_id = _firm_of(case_id)
    row, _ = DocumentIndex.objects.get_or_create(
        case_id=case_id, document_key=key, defaults={"firm_id": firm_id, "generation": 1}
    )
    generation = row.generation  # read before the pages: a later change bumps it past this
    pages = adapter.document_pages(case_id=case_id, key=key)
    if writer is None and not offline:
        writer = get_writer()
    try:
        short = len(pages) < int(conf.get("DOCUMENT_MODEL_MIN_PAGES"))
        if offline or short or not hasattr(writer, "complete_json"):
            built = build_sections_offline(pages)
        else:
            built = _model_sections(writer, key=key, pages=pages, firm_id=firm_id, case_id=case_id)
    except IndexFailed as exc:
        DocumentIndex.objects.filter(pk=row.pk).update(
            attempts=F("attempts") + 1, last_error=exc.reason[:ERROR_MAX]
        )
        raise
    _save(row.pk, ref, built, generation=generation, pages=len(pages))
    row.refresh_from_db()
    return row


def _save(pk: int, ref: DocumentRef, built: Built, *, generation: int, pages: int) -> None:
    with transaction.atomic():
        DocumentIndex.objects.filter(pk=pk).update(
            title=ref.title[:300],
            page_count=pages,
            sections=[s.as_dict() for s in built.sections],
            report={**built.report, "sections": len(built.sections), "tokens": built.tokens},
            builder=built.builder,
            model=built.model,
            built_at=timezone.now(),
            built_generation=generation,
            attempts=0,
            last_error="",
            next_attempt_after=None,
            # Compare-and-set, as summaries: a change since `generation` was read keeps the flag up.
            # An offline build standing in for a model (on demand) keeps it up too: see `ensure_indexes`.
            stale=SqlCase(When(generation=generation, then=Value(False)), default=F("stale")),
            stale_since=SqlCase(When(generation=generation, then=Value(None)), default=F("stale_since")),
        )


def _firm_of(case_id: int) -> int:
    firm_column = case_firm_attname()
    firm_id = case_model().objects.filter(pk=case_id).values_list(firm_column, flat=True).first()
    if firm_id is None:
        raise IndexFailed("case not found")
    return int(firm_id)


# --- on demand, if asked first --------------------------------------------------------------------


def ensure_indexes(*, case_id: int, documents: Sequence[DocumentRef], existing: dict[str, DocumentIndex]) -> list[str]:
    """Build, offline and now, the indexes of up to DOCUMENT_ON_DEMAND_MAX of `documents` that have none yet.

    Returns the keys built. With a model configured, the index is left flagged so that the nightly run
    rebuilds it with the model; an index that exists (even stale) is used as it is.
    """
    missing = [d for d in documents if d.key not in existing or not existing[d.key].built]
    built: list[str] = []
    model_configured = bool(missing) and hasattr(get_writer(), "complete_json")
    model_min = int(conf.get("DOCUMENT_MODEL_MIN_PAGES"))
    for ref in missing[: int(conf.get("DOCUMENT_ON_DEMAND_MAX"))]:
        try:
            row = build_document_index(case_id=case_id, key=ref.key, offline=True)
        except IndexFailed:
            continue
        if row is None:
            continue
        if model_configured and row.page_count >= model_min:
            DocumentIndex.objects.filter(pk=row.pk).update(stale=True, stale_since=timezone.now())
        built.append(ref.key)
    return built


# --- batch later ----------------------------------------------------------------------------------


@dataclass
class IndexRun:
    claimed: int = 0
    rebuilt: int = 0
    removed: int = 0
    failed: int = 0
    tokens: int = 0


def _next_night(attempts: int) -> dt.timedelta:
    return dt.timedelta(hours=20)


def rebuild_stale_indexes(
    *,
    firm_id: int,
    limit: int | None = None,
    budget: int | None = None,
    backoff: Callable[[int], dt.timedelta] = _next_night,
) -> IndexRun:
    """Rebuild up to `limit` (NIGHTLY_DOCUMENT_BATCH_SIZE) of the firm's flagged indexes, oldest first,
    until `budget` tokens are spent (None: no budget). Never raises for a failed build: the index waits
    `backoff(attempts)` (the nightly run passes the summaries' `backoff_delay`)."""
    cap = int(conf.get("NIGHTLY_DOCUMENT_BATCH_SIZE") if limit is None else limit)
    run = IndexRun()
    writer = get_writer()
    taken: list[int] = []
    while run.claimed < cap and (budget is None or run.tokens < budget):
        claim = _claim(firm_id=firm_id, taken=taken)
        if claim is None:
            break
        pk, case_id, key = claim
        taken.append(pk)
        run.claimed += 1
        started, since = time.monotonic(), timezone.now()
        try:
            row = build_document_index(case_id=case_id, key=key, writer=writer)
        except IndexFailed:
            run.failed += 1
            attempts = DocumentIndex.objects.filter(pk=pk).values_list("attempts", flat=True).first() or 1
            DocumentIndex.objects.filter(pk=pk).update(next_attempt_after=timezone.now() + backoff(attempts))
        except DatabaseError:
            raise
        except Exception:
            logger.exception("index build of document %s of case %s raised unexpectedly", key, case_id)
            run.failed += 1
            DocumentIndex.objects.filter(pk=pk).update(next_attempt_after=timezone.now() + backoff(1))
        else:
            if row is None:
                run.removed += 1
            else:
                run.rebuilt += 1
        # From the call log, whatever the outcome: a failed build's attempts were paid for too.
        run.tokens += _tokens_spent(case_id=case_id, since=since)
        logger.info("document index %s/%s: %.1fs", case_id, key, time.monotonic() - started)
    return run


def _tokens_spent(*, case_id: int, since: dt.datetime) -> int:
    total = AICall.objects.filter(
        case_id=case_id, purpose=AICall.Purpose.DOCUMENT_INDEX, created_at__gte=since
    ).aggregate(total=Sum(F("tokens_in") + F("tokens_out")))["total"]
    return int(total or 0)


def _claim(*, firm_id: int, taken: list[int]) -> tuple[int, int, str] | None:
    now = timezone.now()
    # SKIP LOCKED and a lease, as the summaries' nightly claim: the lock lasts only until the lease commits.
    with transaction.atomic():
        rows = list(
            DocumentIndex.objects.filter(firm_id=firm_id, stale=True)
            .filter(Q(next_attempt_after__isnull=True) | Q(next_attempt_after__lte=now))
            .exclude(pk__in=taken)
            .order_by(F("stale_since").asc(nulls_first=True), "pk")
            .select_for_update(skip_locked=True)
            .values_list("pk", "case_id", "document_key")[:1]
        )
        if not rows:
            return None
        pk, case_id, key = rows[0]
        DocumentIndex.objects.filter(pk=pk).update(next_attempt_after=now + _lease())
    return pk, case_id, key


def _lease() -> dt.timedelta:
    batches = 1 + 500 // max(int(conf.get("DOCUMENT_INDEX_BATCH_PAGES")), 1)
    worst = float(conf.get("OPENAI_TIMEOUT")) * (int(conf.get("OPENAI_MAX_RETRIES")) + 1) * 3 * batches
    return max(dt.timedelta(minutes=15), dt.timedelta(seconds=2 * worst))

"""Ask a case's documents: route the question to 1-3 sections, answer with verbatim quotes and their pages.

1. The wall first: the case node must be one the viewer reaches (`selectors.node_get`), and a
   named document must be one of that case's processed documents; anything else is `NotFound`,
   the same for hidden and absent. Only that case's indexes and pages are ever read.
2. Router: the model reads the case's catalogue (at most DOCUMENT_ROUTER_MAX_CHARS) and names up
   to three section ids; ids not in the catalogue are dropped (counted), all unknown is a router
   failure and the offline router decides instead. Offline: BM25 over each section's verified
   terms, title and covers line.
3. Answer: only the routed sections' pages (at most DOCUMENT_ANSWER_MAX_PAGES) are loaded. The
   model quotes them; each quote is checked verbatim on the page it cites and served only if
   found (the rest are counted, never shown). Offline: the best-matching passages themselves.
4. Every outcome is logged (`log_query`), without the question's text.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from graph_memory import conf
from graph_memory.adapter import DocumentRef, Viewer, get_adapter
from graph_memory.documents import model as prompts
from graph_memory.documents import routing as indexes
from graph_memory.documents.passages import passages, rank
from graph_memory.documents.terms import BM25, query_tokens, quote_on_page, tokens
from graph_memory.models import AICall, DocumentIndex, DocumentQuery, Node
from graph_memory.plumbing.ai_calls import log_model_calls
from graph_memory.summaries.base import ModelCall, WriterError
from graph_memory.summaries.instruction_like import is_instruction_like
from graph_memory.summaries.writers import get_writer
from graph_memory.viewer.selectors import NodeRef, node_get
from graph_memory.wall import access

OFFLINE_QUOTES = 3
NO_DOCUMENTS = "This case has no processed documents to answer from."
NO_SECTION = "No section of this case's documents matches the question."
STOPPED = "stopped before the answer call: the client left"
NO_QUOTE = "The documents' sections routed to do not answer the question in words that could be quoted."


@dataclass(frozen=True)
class Target:
    """A case the viewer may open and the processed documents a question may read."""

    case: NodeRef
    case_id: int
    firm_id: int
    documents: list[DocumentRef]


@dataclass(frozen=True)
class Quote:
    document: str  # the document's key (source id `document:<key>`)
    document_title: str
    page: int
    text: str
    section: str
    verified: bool = True

    @property
    def instruction_like(self) -> bool:
        """The quote reads as an instruction to an AI: the page's own words, served as they are and marked."""
        return is_instruction_like(self.text)


@dataclass
class Answer:
    case: NodeRef
    question: str
    quotes: list[Quote] = field(default_factory=list)
    sections: list[str] = field(default_factory=list)
    documents: list[str] = field(default_factory=list)
    router: str = "offline"
    answerer: str = "offline"
    message: str = ""
    stale: bool = False
    unknown_sections: int = 0
    rejected_quotes: int = 0
    usage: dict[str, dict[str, int]] = field(default_factory=dict)
    error: str = ""

    @property
    def outcome(self) -> str:
        return DocumentQuery.Outcome.SUCCESS if self.sections else DocumentQuery.Outcome.UNROUTED

    def tokens(self) -> tuple[int, int]:
        return (sum(u.get("tokens_in", 0) for u in self.usage.values()),
                sum(u.get("tokens_out", 0) for u in self.usage.values()))  # fmt: skip


# --- the wall ------------------------------------------------------------------------------------


def open_documents(*, viewer: Viewer, node_id: Any, document: str | None = None) -> Target:
    """The case behind `node_id` with its processed documents (only `document`, if named); `NotFound` for
    a node the viewer cannot reach, a node that is no case, and a document the case does not have."""
    node = node_get(viewer=viewer, node_id=node_id)
    if node.kind != Node.Kind.CASE:
        raise access.NotFound
    documents = get_adapter().case_documents(case_id=node.ref_id)
    if document is not None:
        documents = [d for d in documents if d.key == document]
        if not documents:
            raise access.NotFound
    return Target(NodeRef.of(node), node.ref_id, node.firm_id, documents)


# --- routing -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Section:
    ref: str  # "<document key>#<section id>"
    document: DocumentRef
    id: str
    title: str
    first_page: int
    last_page: int
    terms: tuple[str, ...]
    covers: str

    def line(self) -> str:
        terms = "; ".join(self.terms)
        return f"[{self.ref}] {self.title} (pp. {self.first_page}-{self.last_page}). Terms: {terms}. {self.covers}"


def _sections(target: Target, rows: dict[str, DocumentIndex]) -> list[_Section]:
    out = []
    for ref in target.documents:
        row = rows.get(ref.key)
        for s in (row.sections if row is not None else []):
            out.append(_Section(f"{ref.key}#{s['id']}", ref, s["id"], s["title"], int(s["first_page"]),
                                int(s["last_page"]), tuple(s.get("terms") or ()), s.get("covers") or ""))  # fmt: skip
    return out


def catalogue(sections: Sequence[_Section], *, max_chars: int) -> tuple[str, int]:
    """The router's view of the indexes, at most `max_chars`; returns it and how many sections were left out."""
    lines: list[str] = []
    size, omitted, current = 0, 0, None
    for section in sections:
        head = [] if section.document.key == current else [
            f"Document {section.document.key}: {section.document.title} ({section.document.page_count} pages)"]
        block = [*head, section.line()]
        cost = sum(len(b) + 1 for b in block)
        if size + cost > max_chars:
            omitted += 1
            continue
        lines += block
        size += cost
        current = section.document.key
    return "\n".join(lines), omitted


def route_offline(sections: Sequence[_Section], question: str) -> list[_Section]:
    """The 1-3 sections whose title, terms and covers line best match the question (BM25); [] for none."""
    wanted = query_tokens(question)
    if not sections or not wanted:
        return []
    bm25 = BM25([tokens(f"{s.title} {s.title} {' '.join(s.terms)} {s.covers}") for s in sections])
    scored = sorted(zip(bm25.scores(wanted), range(len(sections)), strict=True), key=lambda p: (-p[0], p[1]))
    best = scored[0][0]
    if best <= 0:
        return []
    return [sections[i] for score, i in scored[:3] if score >= 0.5 * best]


def _route_model(writer: Any, sections: Sequence[_Section], question: str, answer: Answer,
                 calls: list[ModelCall]) -> list[_Section] | None:  # fmt: skip
    text, _ = catalogue(sections, max_chars=int(conf.get("DOCUMENT_ROUTER_MAX_CHARS")))
    known = {s.ref: s for s in sections}
    try:
        result = prompts.route(writer, catalogue=text, question=question)
    except WriterError as exc:
        calls.extend(exc.calls)
        answer.error = f"router: {exc.reason}"
        return None
    calls.extend(result.calls)
    chosen: list[_Section] = []
    for ref in result.content["sections"]:
        section = known.get(str(ref))
        if section is None:
            answer.unknown_sections += 1  # unknown, or of a document this question may not read: never loaded
        elif section not in chosen:
            chosen.append(section)
    if not chosen:
        answer.error = "router: every section id returned was unknown"
        return None
    return chosen[:3]


# --- answering -----------------------------------------------------------------------------------


def _load_pages(target: Target, chosen: Sequence[_Section]) -> list[tuple[_Section, int, str]]:
    """(section, page number, page text) of the routed sections, at most DOCUMENT_ANSWER_MAX_PAGES; one read a section."""
    left = int(conf.get("DOCUMENT_ANSWER_MAX_PAGES"))
    adapter = get_adapter()
    loaded: list[tuple[_Section, int, str]] = []
    seen: set[tuple[str, int]] = set()
    for section in chosen:
        last = min(section.last_page, section.first_page + max(left, 0) - 1)
        if last < section.first_page:
            break
        pages = adapter.document_pages(case_id=target.case_id, key=section.document.key,
                                       first=section.first_page, last=last)  # fmt: skip
        for offset, text in enumerate(pages):
            number = section.first_page + offset
            if (section.document.key, number) not in seen:
                seen.add((section.document.key, number))
                loaded.append((section, number, text))
                left -= 1
    return loaded


def answer_offline(pages: Sequence[tuple[_Section, int, str]], question: str, *, limit: int) -> list[Quote]:
    """The best passages holding the question's words together (`passages.rank`); [] when none does."""
    ranked = rank(passages(pages), question)
    out = []
    for r in ranked[:limit]:
        section = r.passage.owner
        assert isinstance(section, _Section)
        out.append(Quote(section.document.key, section.document.title, r.passage.page, r.passage.text, section.ref))
    return out


def verified_quotes(proposed: Sequence[dict[str, Any]], pages: Sequence[tuple[_Section, int, str]],
                    answer: Answer) -> list[Quote]:  # fmt: skip
    """The proposed quotes found verbatim on the loaded page they cite; the rest counted in `answer`."""
    by_page = {(s.document.key, n): (s, text) for s, n, text in pages}
    kept: list[Quote] = []
    for quote in proposed:
        found = by_page.get((str(quote.get("document")), int(quote.get("page") or 0)))
        text = str(quote.get("text") or "")
        if found is None or not quote_on_page(text, found[1]) or any(q.text == text for q in kept):
            answer.rejected_quotes += 1
            continue
        section = found[0]
        kept.append(Quote(section.document.key, section.document.title, int(quote["page"]), text, section.ref))
    return kept


def answer_question(target: Target, *, question: str, should_stop: Callable[[], bool] | None = None) -> Answer:
    """Route and answer for a target the caller opened with `open_documents`. Logs model calls, not the query.

    `should_stop` is asked between the router and the answer: once it says yes (a streaming client
    left), the answer call, the one that reads the pages, is never made."""
    answer = Answer(case=target.case, question=question)
    if not target.documents:
        answer.message = NO_DOCUMENTS
        return answer
    rows = {r.document_key: r for r in DocumentIndex.objects.filter(
        case_id=target.case_id, document_key__in=[d.key for d in target.documents])}  # fmt: skip
    if indexes.ensure_indexes(case_id=target.case_id, documents=target.documents, existing=rows):
        rows = {r.document_key: r for r in DocumentIndex.objects.filter(
            case_id=target.case_id, document_key__in=[d.key for d in target.documents])}  # fmt: skip
    sections = _sections(target, rows)
    answer.stale = any(r.stale for r in rows.values())
    try:
        writer = get_writer()
    except ImproperlyConfigured:
        writer = None
    modelled = writer is not None and hasattr(writer, "complete_json")
    chosen: list[_Section] | None = None
    if modelled and sections:
        calls: list[ModelCall] = []
        chosen = _route_model(writer, sections, question, answer, calls)
        _log(target, calls, AICall.Purpose.DOCUMENT_ROUTE, answer, "router" if chosen is not None else "",
             report={"unknown_sections": answer.unknown_sections})  # fmt: skip
        answer.router = "model" if chosen is not None else "offline after model error"
    if chosen is None:
        chosen = route_offline(sections, question)
    answer.sections = [s.ref for s in chosen]
    answer.documents = list(dict.fromkeys(s.document.key for s in chosen))
    if not chosen:
        answer.message = NO_SECTION
        return answer
    if should_stop is not None and should_stop():
        answer.error = STOPPED
        return answer
    pages = _load_pages(target, chosen)
    limit = int(conf.get("DOCUMENT_ANSWER_MAX_QUOTES"))
    if modelled:
        calls = []
        try:
            result = prompts.answer(writer, pages=[(s.document.key, n, t) for s, n, t in pages],
                                    question=question, max_quotes=limit)  # fmt: skip
        except WriterError as exc:
            calls.extend(exc.calls)
            answer.error = (answer.error + "; " if answer.error else "") + f"answer: {exc.reason}"
            answer.answerer = "offline after model error"
        else:
            calls.extend(result.calls)
            answer.quotes = verified_quotes(result.content["quotes"], pages, answer)
            answer.answerer = "model"
        _log(target, calls, AICall.Purpose.DOCUMENT_ANSWER, answer, "answer" if answer.answerer == "model" else "",
             report={"proposed": len(answer.quotes) + answer.rejected_quotes, "served": len(answer.quotes),
                     "rejected": answer.rejected_quotes})  # fmt: skip
    if answer.answerer != "model":
        # The passages are cut from the pages, and still checked on them like any quote.
        page_text = {(s.document.key, n): t for s, n, t in pages}
        offline = answer_offline(pages, question, limit=min(limit, OFFLINE_QUOTES))
        answer.quotes = [q for q in offline if quote_on_page(q.text, page_text[(q.document, q.page)])]
    if not answer.quotes:
        answer.message = NO_QUOTE
    return answer


def _log(target: Target, calls: list[ModelCall], purpose: str, answer: Answer, ok: str,
         report: dict[str, Any]) -> None:  # fmt: skip
    if not calls:
        return
    answer.usage[purpose.removeprefix("document_")] = {
        "tokens_in": sum(c.tokens_in for c in calls), "tokens_out": sum(c.tokens_out for c in calls),
        "latency_ms": sum(c.latency_ms for c in calls),
    }  # fmt: skip
    log_model_calls(
        tuple(calls), firm_id=target.firm_id, case_id=target.case_id, purpose=purpose, writer_name="openai",
        outcome=AICall.Outcome.OK if ok else AICall.Outcome.ERROR, error="" if ok else answer.error, report=report,
    )  # fmt: skip


# --- the log, and the two ways of serving --------------------------------------------------------


def _log_fields(target: Target, *, answer: Answer | None, outcome: str, error: str, latency_ms: int) -> dict[str, Any]:
    tokens_in, tokens_out = answer.tokens() if answer is not None else (0, 0)
    return dict(
        documents=answer.documents if answer else [], sections=answer.sections if answer else [],
        router=answer.router if answer else "", outcome=outcome, error=(error or (answer.error if answer else ""))[:300],
        quotes_served=len(answer.quotes) if answer else 0,
        quotes_rejected=answer.rejected_quotes if answer else 0, tokens_in=tokens_in, tokens_out=tokens_out,
        latency_ms=latency_ms,
    )  # fmt: skip


def log_query(target: Target, *, viewer: Viewer, answer: Answer | None, outcome: str, error: str = "",
              streamed: bool = False, latency_ms: int = 0) -> DocumentQuery:  # fmt: skip
    """One row for every question, whatever its outcome; no question text."""
    return DocumentQuery.objects.create(
        firm_id=target.firm_id, case_id=target.case_id,
        viewer_id=getattr(viewer, "pk", None) if getattr(viewer, "is_authenticated", False) else None,
        streamed=streamed, **_log_fields(target, answer=answer, outcome=outcome, error=error, latency_ms=latency_ms),
    )  # fmt: skip


def log_query_finish(target: Target, *, query_id: int, answer: Answer | None, outcome: str, error: str = "",
                     latency_ms: int = 0) -> None:  # fmt: skip
    """Complete the row `log_query` wrote when a streamed question was received, with how it ended.

    A stream's row is written before its first byte (the client may leave before the stream is
    ever read, and then no code of the stream runs) and completed here: still one row per question.
    """
    fields = _log_fields(target, answer=answer, outcome=outcome, error=error, latency_ms=latency_ms)
    DocumentQuery.objects.filter(firm_id=target.firm_id, pk=query_id).update(**fields)


def ask_documents(*, viewer: Viewer, node_id: Any, question: str, document: str | None = None) -> Answer:
    """Answer `question` from the documents of the case behind `node_id`, for `viewer`.

    Promises: `NotFound` (the one for hidden and absent) unless the viewer may open the case and the
    named document is one of its processed documents; only that case's indexes and pages are read;
    every served quote was found verbatim on the page it cites; one DocumentQuery row per call,
    written whatever the outcome.
    """
    target = open_documents(viewer=viewer, node_id=node_id, document=document)
    started = time.monotonic()
    answer: Answer | None = None
    outcome: str = DocumentQuery.Outcome.FAILURE
    error = "unexpected error"
    try:
        answer = answer_question(target, question=question)
        outcome, error = answer.outcome, ""
        return answer
    finally:
        log_query(target, viewer=viewer, answer=answer, outcome=outcome, error=error,
                  latency_ms=int((time.monotonic() - started) * 1000))  # fmt: skip


def answer_text(answer: Answer) -> str:
    """The answer as the reader sees it: each verified quote with its document and page, or the message."""
    if not answer.quotes:
        return answer.message
    return "\n\n".join(f"\u201c{q.text}\u201d ({q.document_title or q.document}, p. {q.page})" for q in answer.quotes)


def token_chunks(text: str, *, words: int = 8) -> Iterator[str]:
    """The answer text in small pieces for `token` events (whitespace kept, so the pieces join back)."""
    parts = re.findall(r"\S+\s*", text)
    for i in range(0, len(parts), words):
        yield "".join(parts[i : i + words])

"""Long documents: index build time and term precision, routing recall, verified quotes, answer latency.

A generated share purchase agreement of 30 articles x 13 pages (390 pages,
tests/long_documents.py, one question per article whose answering page is
known) on one case, in a scratch database (`bench_documents`) on the embedded
server, created here and dropped at the end.

- Offline index: build time (median of 5 builds of the whole document),
  sections, terms proposed / kept.
- Model index: the same document through the real `openai` client against a
  scripted OpenAI-compatible server (tests/openai_server.py) that answers each
  20-page batch the way the seed's model did: the terms really on the pages,
  plus terms of the neighbouring article (cross-contaminated) and paraphrases
  that appear nowhere. The literal check decides what is kept; the figures
  are the check's, not a model's quality.
- Asking: every question through `answers.ask_documents` (the wall, the
  routing, the page reads, the log row), offline: routing recall@3 (the
  answering page inside one of the routed sections), whether the answering
  page is quoted, share of served quotes found verbatim on their page
  (re-checked here against the raw page), latency p50 / p95, and the router's
  catalogue size against the whole document's.
- Quote precision, before and after the offline answer ranked passages by the question's words
  together (`documents/passages.py`): the share of served quotes that hold the question's key
  phrase in their own words or under the headings they sit under (`tests/long_documents.py`
  `quote_is_precise`), and the recall of the answering page, over the 30 questions and the demo's
  "What does the SPA say about the escrow release?". "Before" is the previous rule, BM25 alone over
  the same passages of the same routed pages, reproduced here (`bm25_alone`).
Prints one markdown section on stdout; progress goes to stderr.
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

from bench.scratch import django_on_scratch, percentile, progress  # noqa: E402

DB_NAME = "bench_documents"
ARTICLES, PAGES_PER_ARTICLE = 30, 13
BATCH = 20


def main() -> None:
    for key in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        os.environ.pop(key, None)
    os.environ["GRAPH_MEMORY_EMBEDDER"] = "none"
    with django_on_scratch(DB_NAME):
        run()


def scripted_batches(pages: list[str]) -> list[dict]:
    """What a model proposes per batch: true terms, a neighbour's terms, and paraphrases found nowhere."""
    from tests.long_documents import TOPICS

    replies = []
    for start in range(1, len(pages) + 1, BATCH):
        end = min(start + BATCH - 1, len(pages))
        sections = []
        for n in range(1, ARTICLES + 1):
            first, last = (n - 1) * PAGES_PER_ARTICLE + 1, n * PAGES_PER_ARTICLE
            if last < start or first > end:
                continue
            title, subs, own, _, _ = TOPICS[(n - 1) % len(TOPICS)]
            neighbour = TOPICS[n % len(TOPICS)]
            terms = [*subs, *own, neighbour[2][0], neighbour[1][0], f"{own[0]} mechanism", f"{title} regime"]
            sections.append({"title": f"Article {n} {title}", "first_page": max(first, start),
                             "last_page": min(last, end), "terms": terms, "covers": f"{title}."})  # fmt: skip
        replies.append({"sections": sections})
    return replies


DEMO_QUESTION = "What does the SPA say about the escrow release?"  # demo/run.py ASK


def bm25_alone(pages: list[tuple[object, int, str]], question: str, *, limit: int) -> list[tuple[int, str]]:
    """The offline answer before issue 32: the passages with the best BM25 score, whatever else they say."""
    from graph_memory.documents.passages import passages
    from graph_memory.documents.terms import BM25, query_tokens, tokens

    candidates = passages(pages)
    scores = BM25([tokens(p.text) for p in candidates]).scores(query_tokens(question))
    ranked = sorted(range(len(candidates)), key=lambda i: (-scores[i], i))
    return [(candidates[i].page, candidates[i].text) for i in ranked[:limit] if scores[i] > 0]


def run() -> None:
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from graph_memory import services
    from graph_memory.documents import answers
    from graph_memory.documents.routing import build_document_index, build_sections_offline
    from graph_memory.documents.terms import quote_on_page
    from graph_memory.models import DocumentIndex
    from tests.factories import CaseFactory, DocumentFactory, FirmFactory, UserFactory
    from tests.long_documents import long_agreement, quote_is_precise
    from tests.openai_server import OpenAIServer, Reply

    call_command("migrate", verbosity=0)
    call_command("createcachetable", verbosity=0)  # the writer remembers each server's response format there
    pages, questions = long_agreement(articles=ARTICLES, pages_per_article=PAGES_PER_ARTICLE)
    chars = sum(len(p) for p in pages)
    firm = FirmFactory(slug="bench-docs")
    owner = UserFactory(firm=firm, username="bench-owner")
    case = CaseFactory(firm=firm, owner=owner)
    DocumentFactory(case=case, key="spa", title="Share Purchase Agreement", pages=pages)
    services.graph_rebuild_firm(firm_id=firm.pk)
    progress(f"{len(pages)} pages, {chars:,} characters")

    offline_times = []
    for _ in range(5):
        started = time.perf_counter()
        built = build_sections_offline(pages)
        offline_times.append(time.perf_counter() - started)
    offline = built.report

    server = OpenAIServer().start()
    os.environ["OPENAI_BASE_URL"], os.environ["OPENAI_API_KEY"] = server.base_url, "bench"
    os.environ["GRAPH_MEMORY_WRITER"] = "openai"
    try:
        server.add_chat(*(Reply.json(r) for r in scripted_batches(pages)))
        started = time.perf_counter()
        modelled = build_document_index(case_id=case.pk, key="spa")
        model_seconds = time.perf_counter() - started
        model_calls = server.calls("/v1/chat/completions")
    finally:
        server.stop()
        for key in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
            os.environ.pop(key, None)
        os.environ["GRAPH_MEMORY_WRITER"] = "extractive"
    model = modelled.report
    progress(f"model index: {model['kept']}/{model['proposed']} terms kept")

    build_document_index(case_id=case.pk, key="spa", offline=True)
    index = DocumentIndex.objects.get(case=case, document_key="spa")
    node = str(services.nodes_lookup(viewer=owner, q=case.key, kind="case").results[0].id)
    sections = answers._sections(answers.Target(None, case.pk, firm.pk, answers.get_adapter().case_documents(case_id=case.pk)),  # type: ignore[arg-type]
                                 {"spa": index})  # fmt: skip
    catalogue, _ = answers.catalogue(sections, max_chars=10**9)
    hits = quoted = served = verified = 0
    precision = {"before": [0, 0, 0], "after": [0, 0, 0]}  # precise quotes, served quotes, answering page quoted
    demo: dict[str, list[tuple[int, str]]] = {}
    latencies: list[float] = []
    query_counts: set[int] = set()
    for question in questions:
        started = time.perf_counter()
        with CaptureQueriesContext(connection) as queries:
            answer = answers.ask_documents(viewer=owner, node_id=node, question=question.text)
        latencies.append((time.perf_counter() - started) * 1000)
        query_counts.add(len(queries) - len(answer.sections))
        routed = [s for s in sections if s.ref in answer.sections]
        hits += any(s.first_page <= question.page <= s.last_page for s in routed)
        quoted += any(q.page == question.page and question.clause in q.text for q in answer.quotes)
        served += len(answer.quotes)
        verified += sum(quote_on_page(q.text, pages[q.page - 1]) for q in answer.quotes)
    for question in [*questions, None]:
        text = question.text if question else DEMO_QUESTION
        answer = answers.ask_documents(viewer=owner, node_id=node, question=text)
        routed = [s for s in sections if s.ref in answer.sections]
        loaded = [(s, p, pages[p - 1]) for s in routed for p in range(s.first_page, s.last_page + 1)]
        for name, quotes in (("after", [(q.page, q.text) for q in answer.quotes]),
                             ("before", bm25_alone(loaded, text, limit=answers.OFFLINE_QUOTES))):  # fmt: skip
            if question is None:
                demo[name] = quotes
                continue
            figures = precision[name]
            figures[0] += sum(quote_is_precise(text, pages, page, quote) for page, quote in quotes)
            figures[1] += len(quotes)
            figures[2] += any(page == question.page and question.clause in quote for page, quote in quotes)
    n = len(questions)

    print("## Long documents: routing index and verbatim answers (bench/bench_documents.py)")
    print()
    print(f"Measured on {dt.date.today().isoformat()}, {os.cpu_count()} cores (a shared machine, busy with other "
          f"work while this ran: the times are upper bounds). One generated share purchase agreement "
          f"of {len(pages)} pages ({chars:,} characters, {ARTICLES} articles with numbered sub-clauses; "
          f"`tests/long_documents.py`), {n} questions whose answering page is known.")  # fmt: skip
    print()
    print("| index | sections | terms proposed | kept | dropped | precision (kept / proposed) | build time |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    print(f"| offline (headings, tf-idf) | {len(built.sections)} | {offline['proposed']} | {offline['kept']} | "
          f"{offline['dropped']} | {offline['kept'] / offline['proposed']:.3f} | "
          f"{statistics.median(offline_times) * 1000:.0f} ms (median of 5) |")  # fmt: skip
    print(f"| model (scripted server, {model_calls} calls of {BATCH} pages) | {len(modelled.sections)} | "
          f"{model['proposed']} | {model['kept']} | {model['dropped']} | {model['kept'] / model['proposed']:.3f} | "
          f"{model_seconds * 1000:.0f} ms |")  # fmt: skip
    print()
    reasons = ", ".join(f"{k} {v}" for k, v in model["dropped_by_reason"].items())
    print(f"Model terms dropped by the literal check: {reasons} (the scripted model proposes each article's "
          "own terms, two of its neighbour's and two paraphrases).")
    print()
    print("| asking (offline router and answer, through `ask_documents`) | figure |")
    print("| --- | ---: |")
    print(f"| routing recall@3 (answering page inside a routed section) | {hits / n:.2f} ({hits}/{n}) |")
    print(f"| answering clause quoted, with its page | {quoted / n:.2f} ({quoted}/{n}) |")
    print(f"| served quotes found verbatim on their page | {verified / max(served, 1):.0%} ({verified}/{served}) |")
    print(f"| latency p50 / p95 | {percentile(latencies, 50):.1f} / {percentile(latencies, 95):.1f} ms |")
    print(f"| SQL queries per answer, less one per routed section | {', '.join(map(str, sorted(query_counts)))} |")
    print(f"| router catalogue vs whole document | {len(catalogue):,} / {chars:,} characters "
          f"({len(catalogue) / chars:.1%}) |")  # fmt: skip
    print()
    print("Offline answer, before and after ranking by the question's words together (the same routed pages; "
          "precision: served quotes holding the question's key phrase, in their words or headings):")  # fmt: skip
    print()
    print("| offline answer | quote precision | answering page quoted (recall) | quotes served |")
    print("| --- | ---: | ---: | ---: |")
    for name, label in (("before", "before: BM25 alone"), ("after", "after: words together, then BM25")):
        good, total, found = precision[name]
        print(f"| {label} | {good / max(total, 1):.2f} ({good}/{total}) | {found / n:.2f} ({found}/{n}) | {total} |")
    print()
    for name in ("before", "after"):
        quoted = "; ".join(f"p. {page}: \u201c{quote[:60]}\u2026\u201d" for page, quote in demo[name])
        print(f"- The demo's \u201c{DEMO_QUESTION}\u201d, {name}: {quoted or 'no quote'}")


if __name__ == "__main__":
    main()

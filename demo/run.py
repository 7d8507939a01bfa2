"""`make demo`: bring the app up on the embedded database with the demo firm loaded.

Migrates, imports the demo firm, gives its acquisition case a long document (a
generated 390-page share purchase agreement), builds the connection map and the
summaries, runs the lint once, asks the long document about its escrow-release clause (the verbatim
quote and its page), starts the server on 127.0.0.1:8000, then shows what the API answers to the
same questions for alice, bob and dana, so the wall is visible in the first
minute. Ctrl-C stops the server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DJANGO_DEBUG", "1")
# The demo prints one line per step itself; the memory's own INFO lines would repeat them.
os.environ.setdefault("GRAPH_MEMORY_LOG_LEVEL", "WARNING")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402

from accounts.models import Firm, User  # noqa: E402

DEMO_PASSWORD = "demo-password"
HOST = "127.0.0.1:8000"
PERSONAS = ["alice", "bob", "dana"]
COLUMN = 44
# The demo firm's long document: a generated share purchase agreement (tests/long_documents.py, 30 articles
# of 13 pages, numbered clauses) on the acquisition case, added after the import so the import file, and
# every test that loads it, stay as they are. The question asks about its escrow-release clause (5.2, p. 54).
LONG_DOCUMENT = {"case": "2026-014", "key": "spa-signed", "title": "Share purchase agreement (signed)",
                 "created": "2026-10-30T16:00:00Z", "articles": 30, "pages_per_article": 13}  # fmt: skip
ASK = {"as": "alice", "question": "What does the SPA say about the escrow release?"}


def step(text: str) -> None:
    print(f"\n== {text}", flush=True)


def done(text: str) -> None:
    """One line per step, saying what it did."""
    print(f"   {text}", flush=True)


def prepare() -> dict[str, str]:
    from rest_framework.authtoken.models import Token

    from graph_memory import services
    from graph_memory.lint import counts_words
    from graph_memory.summaries.writers import get_writer
    from practice.importer import import_firm
    from practice.models import Case

    where = "DATABASE_URL" if os.environ.get("DATABASE_URL") else f"embedded PostgreSQL under {ROOT / '.pgdata'}"
    step(f"Database ({where})")
    call_command("migrate", verbosity=0)
    call_command("createcachetable", verbosity=0)  # throttling counts live in the database cache
    done("migrated; cache table ready")
    step("Importing the demo firm (demo/hale-ward.json)")
    counts = import_firm((ROOT / "demo" / "hale-ward.json").read_bytes())
    created, updated = sum(counts.created.values()), sum(counts.updated.values())
    done(
        f"{created} records created, {updated} updated, {sum(counts.unchanged.values())} unchanged"
        if counts.changed
        else "already imported, nothing changed"
    )
    firm = Firm.objects.get(slug="hale-ward")
    for user in User.objects.filter(firm=firm):
        user.set_password(DEMO_PASSWORD)
        user.save(update_fields=["password"])
    done(f"demo only: every demo user's password is set to {DEMO_PASSWORD!r}")
    if settings.CELERY_TASK_ALWAYS_EAGER:
        done("no CELERY_BROKER_URL set: background tasks run eagerly in this process")
    add_long_document(firm)
    step("Connection map")
    # The import already synced each case's part of the map as it committed; the rebuild checks it all.
    done(services.graph_rebuild_firm(firm_id=firm.pk).describe())
    step("Case summaries (the nightly refresh, run now)")
    # A case imported before the memory layer was installed was never flagged:
    # flag every case of the demo firm that has no summary yet.
    services.mark_stale(case_ids=Case.objects.filter(firm=firm).exclude(memory_summary__text__gt="").values("pk"))
    run = services.refresh_firm(firm_id=firm.pk, trigger="command")
    writer = get_writer().name
    done(
        f"{run.rewritten} written, {run.failed} failed, {run.skipped} skipped; writer {writer}, "
        f"{run.tokens_used} model tokens" + (" (it calls no model)" if writer == "extractive" else "")
        + (f"; error: {run.error}" if run.error else "")
    )
    # Once per demo run, so that admin's lint pages and the health page have a run to show.
    step("Lint (the weekly check, run now)")
    lint = services.lint_firm(firm_id=firm.pk, trigger="command")
    done(counts_words(lint.counts) if lint.status == "done" else f"failed: {lint.error}")
    ask_long_document(firm)
    return {name: Token.objects.get_or_create(user=User.objects.get(username=name))[0].key for name in PERSONAS}


def add_long_document(firm: Firm) -> None:
    """Give the acquisition case its long document, through the host's models; unchanged, it is not saved again
    (a save flags the case's summary and the document's index stale)."""
    from django.utils.dateparse import parse_datetime

    from practice.models import Case, Document
    from tests.long_documents import long_agreement

    spec = LONG_DOCUMENT
    step(f"A long document on case {spec['case']} ({spec['title']}, generated)")
    case = Case.objects.get(firm=firm, key=spec["case"])
    pages, _ = long_agreement(articles=spec["articles"], pages_per_article=spec["pages_per_article"])
    wanted = {"firm_id": firm.pk, "title": spec["title"], "status": Document.Status.PROCESSED,
              "created": parse_datetime(spec["created"]), "pages": pages}  # fmt: skip
    current = Document.objects.filter(case=case, key=spec["key"]).values(*wanted).first()
    if current == wanted:
        done(f"already added, nothing changed ({len(pages)} pages)")
        return
    Document.objects.update_or_create(case=case, key=spec["key"], defaults=wanted)
    done(f"{len(pages)} pages, {spec['articles']} articles with numbered clauses, {'added' if current is None else 'updated'} "
         f"as {spec['key']!r}, processed")  # fmt: skip


def long_document_case_node(firm: Firm) -> str:
    from graph_memory.models import Node
    from practice.models import Case

    case = Case.objects.get(firm=firm, key=LONG_DOCUMENT["case"])
    return str(Node.objects.get(kind=Node.Kind.CASE, ref_id=case.pk).pk)


def ask_long_document(firm: Firm) -> Any:
    """Ask the long document a question about one clause, as a lawyer who may open the case, through the
    service the ask endpoint uses (`GET cases/{id}/ask/?q=...&document=...`); print the first verbatim quote."""
    from graph_memory.documents import answers

    spec = LONG_DOCUMENT
    step(f'Asking case {spec["case"]}\'s long document as {ASK["as"]}: "{ASK["question"]}"')
    viewer = User.objects.get(firm=firm, username=ASK["as"])
    answer = answers.ask_documents(viewer=viewer, node_id=long_document_case_node(firm), question=ASK["question"],
                                   document=spec["key"])  # fmt: skip
    done(f"router {answer.router}, answerer {answer.answerer}: {', '.join(answer.sections) or 'no section'}; "
         f"{len(answer.quotes)} quotes, each found verbatim on its page")  # fmt: skip
    if not answer.quotes:
        done(answer.message)
        return answer
    first = answer.quotes[0]
    for line in textwrap.wrap(f"\u201c{first.text}\u201d (p. {first.page})", 96):
        done(line)
    return answer


def api(token: str, path: str, **params: str) -> tuple[int, Any]:
    url = f"http://{HOST}/api/memory/{path}"
    if params:
        url += "?" + urllib.parse.urlencode(params)
    request = urllib.request.Request(url, headers={"Authorization": f"Token {token}"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def first_node(token: str, q: str, kind: str) -> str | None:
    status, body = api(token, "nodes/", q=q, kind=kind)
    results = body.get("results", []) if status == 200 else []
    return results[0]["id"] if results else None


def describe(token: str, question: str) -> list[str]:
    if question == "walk":
        node = first_node(token, "Northwind Holdings", "client")
        if node is None:
            return ["(no such client for this user)"]
        status, body = api(token, f"nodes/{node}/neighbors/")
        return [f"{r['edge']}: {r['node']['label']}" for r in body.get("results", [])] or [f"HTTP {status}"]
    if question == "brief":
        node = first_node(token, "Meridian Foods", "client")
        if node is None:
            return ["(no such client for this user)"]
        status, body = api(token, f"nodes/{node}/brief/")
        lines = [f"{c['case']['label']}" for c in body.get("cases", [])]
        return lines or [f"HTTP {status}"]
    if question == "search":
        status, body = api(token, "search/", q="lease dispute")
        lines = [f"{r['case']['label']} ({r['score']:.2f})" for r in body.get("results", [])]
        return (lines or ["(nothing)"]) + [f"[mode: {body.get('mode', '?')}]"]
    status, body = api(token, "conflicts/", name="Northwind Holdings")
    return [f"{m['role']} in {m['case']['label']}" for m in body.get("matches", [])] or ["(no conflict visible)"]


QUESTIONS = [
    ("walk", 'Walk from client "Northwind Holdings"'),
    ("brief", 'Brief of client "Meridian Foods" (cases)'),
    ("search", 'Search "lease dispute"'),
    ("conflicts", 'Conflict check "Northwind Holdings"'),
]


def show_side_by_side(tokens: dict[str, str]) -> None:
    step("The wall at work: the same requests for alice, bob and dana (firm admin)")
    header = "".join(name.ljust(COLUMN) for name in PERSONAS)
    for key, title in QUESTIONS:
        print(f"\n-- {title}\n{header}\n" + "-" * (COLUMN * len(PERSONAS)))
        columns = []
        for name in PERSONAS:
            wrapped: list[str] = []
            for line in describe(tokens[name], key):
                wrapped += textwrap.wrap(line, COLUMN - 2) or [""]
            columns.append(wrapped)
        for row in range(max(len(c) for c in columns)):
            print("".join((c[row] if row < len(c) else "").ljust(COLUMN) for c in columns))


def wait_for_server(process: subprocess.Popen[bytes]) -> None:
    for _ in range(150):
        if process.poll() is not None:
            sys.exit("The server stopped while starting (is port 8000 already in use?).")
        try:
            urllib.request.urlopen(f"http://{HOST}/healthz", timeout=2)
            return
        except OSError:
            time.sleep(0.2)
    sys.exit("The server did not answer on http://127.0.0.1:8000/healthz within 30 s.")


def main() -> None:
    tokens = prepare()
    step(f"Starting the server at http://{HOST}/")
    log_path = ROOT / ".run" / "demo-server.log"
    log_path.parent.mkdir(exist_ok=True)
    log = log_path.open("ab")
    # uvicorn, the ASGI server: the ask endpoint's Server-Sent Events and MCP at /mcp/ need it
    # (runserver is WSGI). With DJANGO_DEBUG=1 config/asgi.py serves admin's static files too.
    address, _, port = HOST.partition(":")
    server = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "config.asgi:application", "--host", address, "--port", port,
         "--log-level", "warning"],
        cwd=ROOT, stdout=log, stderr=log,
    )  # fmt: skip
    print(f"(server log: {log_path.relative_to(ROOT)})")
    try:
        wait_for_server(server)
        show_side_by_side(tokens)
        step("Try it yourself")
        print(f"Start page:              http://{HOST}/")
        print(f"Admin (firm admin dana): http://{HOST}/admin/  user dana, password {DEMO_PASSWORD}")
        print(f"Memory health page:      http://{HOST}/admin/graph_memory/casesummary/health/")
        print(f"API docs as a lawyer:    http://{HOST}/login/?next=/api/docs/  user alice, password {DEMO_PASSWORD}")
        print(f"API docs as dana:        http://{HOST}/api/docs/  (after signing in to admin or at /login/)")
        print(f'As alice:  curl -H "Authorization: Token {tokens["alice"]}" "http://{HOST}/api/memory/search/?q=lease+dispute"')
        ask = urllib.parse.urlencode({"q": ASK["question"], "document": LONG_DOCUMENT["key"]})
        node = long_document_case_node(Firm.objects.get(slug="hale-ward"))
        print(f'Ask, as alice: curl -H "Authorization: Token {tokens["alice"]}" '
              f'"http://{HOST}/api/memory/cases/{node}/ask/?{ask}"')  # fmt: skip
        print("Ctrl-C stops the server.", flush=True)
        server.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()

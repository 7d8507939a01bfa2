"""`make demo`: bring the app up on the embedded database with the demo firm loaded.

Migrates, imports the demo firm, builds the connection map and the summaries,
starts the server on 127.0.0.1:8000, then shows what the API answers to the
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


def step(text: str) -> None:
    print(f"\n== {text}", flush=True)


def done(text: str) -> None:
    """One line per step, saying what it did."""
    print(f"   {text}", flush=True)


def prepare() -> dict[str, str]:
    from rest_framework.authtoken.models import Token

    from graph_memory import services
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
    return {name: Token.objects.get_or_create(user=User.objects.get(username=name))[0].key for name in PERSONAS}


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
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "runserver", HOST, "--noreload"], cwd=ROOT, stdout=log, stderr=log
    )
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
        print("Ctrl-C stops the server.", flush=True)
        server.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()

"""The site a newcomer lands on: the start page, signing in as a lawyer, and the schema download."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client as HttpClient
from django.urls import reverse

from accounts.models import Firm, User
from graph_memory.models import LintRun
from tests.conftest import Personas

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery"


def _with_password(user: User) -> None:
    user.set_password(PASSWORD)
    user.save(update_fields=["password"])


def test_a_lawyer_signs_in_reaches_the_api_docs_and_signs_out(personas: Personas) -> None:
    lawyer = personas.owner
    assert not lawyer.is_staff
    _with_password(lawyer)
    http = HttpClient()
    docs = http.get("/api/docs/")
    assert docs.status_code == 302 and docs["Location"] == "/login/?next=/api/docs/"
    form = http.get(docs["Location"])
    assert form.status_code == 200 and b'name="password"' in form.content
    signed_in = http.post("/login/", {"username": lawyer.username, "password": PASSWORD, "next": "/api/docs/"})
    assert signed_in.status_code == 302 and signed_in["Location"] == "/api/docs/"
    assert http.get("/api/docs/").status_code == 200
    # The session works for the API itself, as docs/assistant-developers.md says.
    assert http.get("/api/memory/tools/").status_code == 200
    assert http.get("/api/schema/", {"format": "json"}).status_code == 200
    # Logging out is a POST (Django 5); afterwards the session is gone.
    assert http.get("/logout/").status_code == 405
    out = http.post("/logout/")
    assert out.status_code == 302 and out["Location"] == "/"
    assert http.get("/api/memory/tools/").status_code == 401
    assert http.get("/api/docs/").status_code == 302


def test_a_wrong_password_is_refused_without_saying_who_exists(personas: Personas) -> None:
    _with_password(personas.owner)
    wrong = HttpClient().post("/login/", {"username": personas.owner.username, "password": "nope"})
    nobody = HttpClient().post("/login/", {"username": "no-such-user", "password": "nope"})
    assert wrong.status_code == nobody.status_code == 200
    for response in (wrong, nobody):
        assert b"Please enter a correct username and password." in response.content
        assert "_auth_user_id" not in response.wsgi_request.session


def test_admin_login_points_lawyers_to_the_site_sign_in(personas: Personas) -> None:
    page = HttpClient().get("/admin/login/").content.decode()
    assert 'id="not-staff-hint"' in page and 'href="/login/"' in page


def test_start_page_for_a_visitor(db: None) -> None:
    response = HttpClient().get("/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "Graph Memory Layer" in page and "connection map" in page
    for href in ('href="/login/"', 'href="/api/docs/"', 'href="/admin/"', 'href="/api/schema/"'):
        assert href in page, href
    assert reverse("admin:graph_memory_health") not in page


def test_start_page_links_only_what_the_user_may_open(personas: Personas) -> None:
    health = reverse("admin:graph_memory_health")
    lawyer = HttpClient()
    lawyer.force_login(personas.owner)
    page = lawyer.get("/").content.decode()
    assert 'id="signed-in"' in page and str(personas.owner) in page and 'action="/logout/"' in page
    assert 'href="/admin/"' not in page and health not in page
    admin = HttpClient()
    admin.force_login(personas.firm_admin)
    page = admin.get("/").content.decode()
    assert 'href="/admin/"' in page and f'href="{health}"' in page
    # The health link leads somewhere the firm admin may go.
    assert admin.get(health).status_code == 200


def test_admin_view_site_leads_to_the_start_page(personas: Personas) -> None:
    admin = HttpClient()
    admin.force_login(personas.firm_admin)
    index = admin.get("/admin/").content.decode()
    assert 'href="/">View site' in index
    assert admin.get("/").status_code == 200


def test_schema_download_has_an_ascii_file_name(personas: Personas) -> None:
    http = HttpClient()
    http.force_login(personas.owner)
    for params, suffix in (({}, "yaml"), ({"format": "json"}, "json")):
        response = http.get("/api/schema/", params)
        assert response.status_code == 200
        header = response["Content-Disposition"]
        assert header == f'inline; filename="graph-memory-layer-assistant-api.{suffix}"'
        assert header.isascii() and "=?utf-8?" not in header


def test_the_demo_prints_one_plain_line_per_step(
    demo_firm: Firm, settings: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from demo import run

    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "EMBEDDER": "none", "WRITER": "extractive"}
    capsys.readouterr()
    tokens = run.prepare()
    out, err = capsys.readouterr()
    assert set(tokens) == {"alice", "bob", "dana"}
    lines = [line for line in out.splitlines() if line.strip()]
    steps = [line for line in lines if line.startswith("== ")]
    assert [s.split(" (")[0] for s in steps] == [
        "== Database", "== Importing the demo firm", "== A long document on case 2026-014", "== Connection map",
        "== Case summaries", "== Lint", "== Asking case 2026-014's long document as alice: \"What does the SPA say about the escrow release?\"",
    ]  # fmt: skip
    assert "already imported, nothing changed" in out  # the fixture imported it first
    assert "390 pages, 30 articles with numbered clauses, added as 'spa-signed', processed" in out
    assert "router offline, answerer offline: spa-signed#article-5" in out and "(p. 54)" in out
    # Inside a test transaction the import's map sync never commits: here the rebuild adds the rows.
    assert re.search(r"\n   (already up to date: \d+ rows checked, none written|\d+ nodes and \d+ edges added, )", out)
    assert re.search(r"\d+ written, 0 failed, 0 skipped; writer extractive, 0 model tokens \(it calls no model\)", out)
    assert re.search(r"\n   \d+ findings?: \d+ party hygiene", out)  # the lint ran once, its counts in words
    assert LintRun.objects.filter(firm=demo_firm).count() == 1
    for noise in ("{'", "it/s", "Loading weights", "|"):
        assert noise not in out, noise
    assert "it/s" not in err and "Loading weights" not in err  # no progress bars (the memory's log lines may be)


def test_the_demo_asks_its_long_document_and_gets_the_escrow_clause_verbatim_with_its_page(
    demo_firm: Firm, settings: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from demo import run
    from graph_memory import services
    from graph_memory.documents import answers
    from graph_memory.documents.terms import quote_on_page
    from graph_memory.models import DocumentIndex, DocumentQuery, Node
    from graph_memory.wall import access
    from practice.models import Case, Document
    from tests.document_support import ESCROW_CLAUSE
    from tests.long_documents import long_agreement

    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "EMBEDDER": "none", "WRITER": "extractive"}
    spec = run.LONG_DOCUMENT
    pages, questions = long_agreement(articles=spec["articles"], pages_per_article=spec["pages_per_article"])
    escrow = next(q for q in questions if q.clause == ESCROW_CLAUSE)
    assert (len(pages), escrow.page) == (390, 54)  # what the README says the demo prints
    run.add_long_document(demo_firm)
    services.graph_rebuild_firm(firm_id=demo_firm.pk)  # the demo's next step; in a test transaction no sync commits
    capsys.readouterr()
    answer = run.ask_long_document(demo_firm)
    out = capsys.readouterr().out
    first = answer.quotes[0]
    assert ESCROW_CLAUSE in first.text and first.page == escrow.page and first.document == "spa-signed"
    assert answer.sections[0] == "spa-signed#article-5" and (answer.router, answer.answerer) == ("offline", "offline")
    assert all(quote_on_page(q.text, pages[q.page - 1]) for q in answer.quotes)  # every quote verbatim on its page
    # What it prints is that quote, with its page (wrapped lines joined back).
    printed = " ".join(line.strip() for line in out.splitlines()[2:])
    assert f"\u201c{first.text}\u201d (p. 54)" in printed, out
    assert DocumentQuery.objects.get().outcome == "success"
    # A lawyer of the firm who may not open the case gets the one NotFound from the same service.
    case = Case.objects.get(firm=demo_firm, key=spec["case"])
    node = Node.objects.get(kind=Node.Kind.CASE, ref_id=case.pk)
    with pytest.raises(access.NotFound):
        answers.ask_documents(viewer=User.objects.get(username="carol"), node_id=node.pk, question=run.ASK["question"])
    # A second run changes nothing and saves nothing (a save would flag the document's index stale again).
    index = DocumentIndex.objects.get(case_id=case.pk, document_key="spa-signed")
    assert (index.stale, index.page_count) == (False, 390)
    run.add_long_document(demo_firm)
    assert "already added, nothing changed (390 pages)" in capsys.readouterr().out
    assert DocumentIndex.objects.get(pk=index.pk).stale is False
    assert Document.objects.filter(case=case).count() == 4  # the import's three and the long one


def test_issue_token_prints_the_same_token_until_rotated(personas: Personas) -> None:
    from io import StringIO

    from django.core.management import call_command

    def issue(*args: str) -> str:
        out = StringIO()
        call_command("issue_token", personas.owner.username, *args, stdout=out)
        return out.getvalue().strip()

    first = issue()
    assert issue() == first
    rotated = issue("--rotate")
    assert rotated != first and issue() == rotated
    old = HttpClient(headers={"Authorization": f"Token {first}"}).get("/api/memory/tools/")
    new = HttpClient(headers={"Authorization": f"Token {rotated}"}).get("/api/memory/tools/")
    assert old.status_code == 401 and new.status_code == 200

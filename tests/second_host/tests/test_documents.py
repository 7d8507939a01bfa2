"""Issue 18 in the second host: a filing's page rows are indexed and quoted, its changes flag the index, the wall holds."""

from __future__ import annotations

import pytest
from django.test import Client as HttpClient
from rest_framework.authtoken.models import Token

from graph_memory.adapter import get_adapter
from graph_memory.documents.routing import build_document_index
from graph_memory.documents.terms import quote_on_page
from graph_memory.models import DocumentIndex, DocumentQuery, Node
from tests.second_host.matters.models import Filing, FilingPage
from tests.second_host.world import ACQ, TERM, Office

pytestmark = pytest.mark.django_db

NOT_FOUND = b'{"error":{"code":"not_found","message":"Not found.","field":null}}'
TERMINATION = "The Buyer may terminate if antitrust clearance is not obtained by 15 December 2026."


def _filing(memory: Office) -> Filing:
    return Filing.objects.get(matter=memory.matters[ACQ], title="Share purchase agreement v3")


def test_the_adapter_lists_processed_filings_and_reads_page_rows(memory: Office) -> None:
    adapter, matter, filing = get_adapter(), memory.matters[ACQ], _filing(memory)
    documents = adapter.case_documents(case_id=matter.pk)
    assert [(d.key, d.title, d.page_count) for d in documents] == [(str(filing.pk), filing.title, 2)]  # no scan
    assert adapter.document_pages(case_id=matter.pk, key=str(filing.pk), first=2, last=2) == [TERMINATION]
    # Another matter's filing through this matter reads nothing.
    assert adapter.document_pages(case_id=memory.matters[TERM].pk, key=str(filing.pk)) == []


def test_a_changed_page_row_flags_the_filings_index(memory: Office) -> None:
    matter, filing = memory.matters[ACQ], _filing(memory)
    index = build_document_index(case_id=matter.pk, key=str(filing.pk), offline=True)
    assert index is not None and not index.stale
    page = FilingPage.objects.get(filing=filing, number=2)
    page.text = TERMINATION + " Amended."
    page.save()
    assert DocumentIndex.objects.get(pk=index.pk).stale


def test_asking_quotes_the_page_for_who_may_open_the_matter(memory: Office) -> None:
    node = str(Node.objects.get(kind="case", ref_id=memory.matters[ACQ].pk).pk)

    def ask(persona: str):
        token = Token.objects.create(user=memory.people[persona]).key
        client = HttpClient(headers={"Authorization": f"Token {token}"})
        return client.get(f"/api/memory/cases/{node}/ask/", {"q": "When may the buyer terminate for antitrust clearance?"})

    body = ask("owner").json()
    quote = body["quotes"][0]
    assert TERMINATION in quote["text"] and quote["page"] == 2 and quote_on_page(quote["text"], TERMINATION)
    assert ask("outsider").content == NOT_FOUND and ask("other_admin").content == NOT_FOUND
    assert DocumentQuery.objects.get().outcome == "success"

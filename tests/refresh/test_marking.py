"""Noticing changes: `mark_stale` and the receivers that call it (graph_memory/refresh/marking.py, signals.py)."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from graph_memory.models import AICall, CaseSummary
from graph_memory.refresh import mark_stale
from practice.models import Case, CaseCounterparty, Document
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
    UserFactory,
)

pytestmark = pytest.mark.django_db


def generation(case: Case) -> int:
    return CaseSummary.objects.filter(case=case).values_list("generation", flat=True).first() or 0


def settle(*cases: Case) -> None:
    """As if a rewrite just succeeded: flag down, counter kept."""
    CaseSummary.objects.filter(case__in=cases).update(stale=False, stale_since=None)


def test_marking_any_number_of_cases_is_one_statement(django_assert_num_queries) -> None:
    firm = FirmFactory()
    cases = CaseFactory.create_batch(3, firm=firm)
    other_firm_case = CaseFactory()
    CaseSummary.objects.all().delete()  # as if never marked: rows must be created by the mark itself
    with django_assert_num_queries(1):
        touched = mark_stale(case_ids=[c.pk for c in cases] + [other_firm_case.pk, 999_999_999])
    assert touched == 4
    rows = {s.case_id: s for s in CaseSummary.objects.all()}
    assert set(rows) == {c.pk for c in [*cases, other_firm_case]}
    for case in [*cases, other_firm_case]:
        row = rows[case.pk]
        assert (row.firm_id, row.stale, row.generation, row.text) == (case.firm_id, True, 1, "")
        assert row.stale_since is not None
    first_since = rows[cases[0].pk].stale_since
    with django_assert_num_queries(1):
        mark_stale(case_ids=[cases[0].pk, cases[0].pk])
    row = CaseSummary.objects.get(case=cases[0])
    assert (row.generation, row.stale_since) == (2, first_since)  # oldest change kept
    with django_assert_num_queries(0):
        assert mark_stale(case_ids=[]) == 0


def test_marking_a_queryset_is_one_statement(django_assert_num_queries) -> None:
    client = ClientFactory()
    cases = CaseFactory.create_batch(2, firm=client.firm, client=client)
    settle(*cases)
    with django_assert_num_queries(1):
        assert mark_stale(case_ids=Case.objects.filter(client=client)) == 2
    assert CaseSummary.objects.filter(case__in=cases, stale=True).count() == 2


def test_marking_after_a_rewrite_restarts_stale_since() -> None:
    case = CaseFactory()
    long_ago = timezone.now() - dt.timedelta(days=30)
    CaseSummary.objects.filter(case=case).update(stale=False, stale_since=long_ago)
    mark_stale(case_ids=[case.pk])
    row = CaseSummary.objects.get(case=case)
    assert row.stale and row.stale_since > long_ago


def test_document_flags_only_when_processed_or_leaving_processed() -> None:
    case = CaseFactory()
    settle(case)
    start = generation(case)
    doc = DocumentFactory(case=case, status=Document.Status.UPLOADED)
    for status in (Document.Status.PROCESSING, Document.Status.FAILED, Document.Status.PROCESSING):
        doc.status = status
        doc.save()
    doc.title = "Renamed while processing"
    doc.save()
    assert generation(case) == start
    assert not CaseSummary.objects.get(case=case).stale
    doc.status = Document.Status.PROCESSED
    doc.save()
    assert generation(case) == start + 1
    doc.pages = ["Corrected text."]
    doc.save()  # a processed document's content is part of the summary
    assert generation(case) == start + 2
    loaded = Document.objects.get(pk=doc.pk)
    loaded.status = Document.Status.FAILED  # leaving processed
    loaded.save()
    assert generation(case) == start + 3
    loaded.delete()  # no longer processed: its removal changes nothing
    assert generation(case) == start + 3
    Document.objects.get(pk=DocumentFactory(case=case).pk).delete()  # created processed, then deleted
    assert generation(case) == start + 5
    assert CaseSummary.objects.get(case=case).stale


@pytest.mark.parametrize("factory", [DraftFactory, DeadlineFactory, InvoiceFactory, NoteFactory])
def test_case_records_flag_on_add_change_and_delete(factory) -> None:
    case = CaseFactory()
    start = generation(case)
    record = factory(case=case)
    assert generation(case) == start + 1
    record.save()
    assert generation(case) == start + 2
    type(record).objects.filter(pk=record.pk).delete()
    assert generation(case) == start + 3
    assert CaseSummary.objects.get(case=case).stale


def test_case_header_changes_flag_and_other_saves_do_not() -> None:
    case = CaseFactory()
    assert generation(case) == 1  # a new case is stale from the start
    settle(case)
    case.owner = UserFactory(firm=case.firm)
    case.save()  # the owner is not part of the summary
    Case.objects.get(pk=case.pk).save()
    assert generation(case) == 1
    for field, value in [
        ("title", "New title"),
        ("status", Case.Status.CLOSED),
        ("opened", dt.date(2025, 3, 1)),
        ("description", "Changed."),
        ("client", ClientFactory(firm=case.firm)),
    ]:
        before = generation(case)
        loaded = Case.objects.get(pk=case.pk)
        setattr(loaded, field, value)
        loaded.save()
        assert generation(case) == before + 1, field
    assert CaseSummary.objects.get(case=case).stale


def test_counterparties_added_and_removed_flag() -> None:
    case = CaseFactory()
    settle(case)
    cp, other = CounterpartyFactory.create_batch(2, firm=case.firm)
    steps = [
        lambda: case.counterparties.add(cp, through_defaults={"firm": case.firm}),
        lambda: case.counterparties.remove(cp),
        lambda: other.cases.add(case, through_defaults={"firm": case.firm}),
        lambda: other.cases.clear(),
        lambda: CaseCounterparty.objects.create(case=case, counterparty=cp, firm=case.firm),
        lambda: CaseCounterparty.objects.filter(case=case).delete(),
    ]
    for step in steps:
        before = generation(case)
        settle(case)
        step()
        assert generation(case) > before
        assert CaseSummary.objects.get(case=case).stale


def test_renaming_a_party_flags_every_case_it_is_on() -> None:
    firm = FirmFactory()
    client = ClientFactory(firm=firm)
    cp = CounterpartyFactory(firm=firm)
    on_both = CaseFactory(firm=firm, client=client, counterparties=[cp])
    client_only = CaseFactory(firm=firm, client=client)
    unrelated = CaseFactory(firm=firm)
    settle(on_both, client_only, unrelated)
    client.save()  # unchanged: nothing flags
    assert not CaseSummary.objects.filter(stale=True).exists()
    client.name = "Renamed Holdings"
    client.save()
    assert set(CaseSummary.objects.filter(stale=True).values_list("case_id", flat=True)) == {on_both.pk, client_only.pk}
    settle(on_both, client_only)
    cp.name = "Renamed Counterparty"
    cp.save()
    assert set(CaseSummary.objects.filter(stale=True).values_list("case_id", flat=True)) == {on_both.pk}


def test_deleting_a_case_does_not_resurrect_its_summary() -> None:
    firm = FirmFactory()
    case = CaseFactory(firm=firm, counterparties=[CounterpartyFactory(firm=firm)])
    DocumentFactory(case=case)
    NoteFactory(case=case)
    DraftFactory(case=case)
    case_id = case.pk
    case.delete()
    assert not CaseSummary.objects.filter(case_id=case_id).exists()


def test_marking_never_calls_a_model() -> None:
    case = CaseFactory()
    for _ in range(20):
        DocumentFactory(case=case)
    assert AICall.objects.count() == 0
    assert generation(case) == 21

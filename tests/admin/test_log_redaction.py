"""A deleted case's text leaves Django admin's log: titles in `object_repr` and `change_message` are blanked.

Through the real admin, as the firm's admin: the delete view (which logs the
deletion before deleting) and the changelist's bulk "delete selected" action.
The entries stay, with their action, object id, user and time.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib import admin
from django.contrib.admin.models import ADDITION, CHANGE, DELETION, LogEntry
from django.contrib.contenttypes.models import ContentType
from django.db import transaction
from django.test import Client as HttpClient
from django.test import RequestFactory
from django.urls import reverse

from accounts.models import Firm, User
from practice.models import Case, Document

pytestmark = pytest.mark.django_db

REDACTED = "[deleted case]"


def _url(view: str, *args: Any) -> str:
    return reverse(f"admin:practice_case_{view}", args=args)


def _login(user: User) -> HttpClient:
    http = HttpClient()
    http.force_login(user)
    return http


def _history(case: Case, user: User) -> None:
    """What admin logs when a case is added, then edited with its team inline (as its add and change views do)."""
    model_admin = admin.site._registry[Case]
    request = RequestFactory().post("/")
    request.user = user
    model_admin.log_addition(request, case, [{"added": {}}])
    model_admin.log_change(
        request, case, [{"changed": {"fields": ["Title"]}}, {"added": {"name": "team member", "object": str(case.title)}}]
    )


def _entries(case_id: int) -> list[LogEntry]:
    ct = ContentType.objects.get_for_model(Case)
    return list(LogEntry.objects.filter(content_type=ct, object_id=str(case_id)).order_by("pk"))


def _log_text() -> str:
    return " ".join(f"{e.object_repr} {e.change_message}" for e in LogEntry.objects.all())


@pytest.fixture
def dana(demo_firm: Firm, demo_users: dict[str, User]) -> User:
    return demo_users["dana"]


def test_the_delete_view_redacts_every_entry_of_the_case_its_own_included(dana: User) -> None:
    case = Case.objects.get(key="2026-031")
    other = Case.objects.get(key="2026-014")
    _history(case, dana)
    _history(other, dana)
    kept = [(e.pk, e.action_flag, e.user_id, e.action_time) for e in _entries(case.pk)]
    http = _login(dana)
    assert case.title in http.get(reverse("admin:index")).content.decode()  # "Recent actions"

    response = http.post(_url("delete", case.pk), {"post": "yes"})
    assert response.status_code == 302 and not Case.objects.filter(pk=case.pk).exists()

    entries = _entries(case.pk)
    assert [e.action_flag for e in entries] == [ADDITION, CHANGE, DELETION]  # admin's own deletion entry too
    assert [(e.pk, e.action_flag, e.user_id, e.action_time) for e in entries[:2]] == kept
    assert entries[2].user_id == dana.pk
    for entry in entries:
        assert (entry.object_repr, entry.change_message) == (REDACTED, "")
    assert case.title not in _log_text() and "Brightline v. Northwind" not in _log_text()
    http.get(response["Location"])  # admin's one-time "was deleted successfully" message is shown, then gone
    page = http.get(reverse("admin:index")).content.decode()
    assert case.title not in page and REDACTED in page
    # Another case keeps its history.
    assert {e.object_repr for e in _entries(other.pk)} == {str(other)}
    assert other.title in page


def test_the_bulk_delete_action_redacts_every_selected_case(dana: User) -> None:
    cases = list(Case.objects.filter(key__in=["2026-014", "2025-088"]).order_by("pk"))
    kept = Case.objects.get(key="2026-047")
    for case in [*cases, kept]:
        _history(case, dana)
    http = _login(dana)
    data = {"action": "delete_selected", "_selected_action": [c.pk for c in cases], "post": "yes"}
    response = http.post(_url("changelist"), data)
    assert response.status_code == 302
    assert not Case.objects.filter(pk__in=[c.pk for c in cases]).exists()
    for case in cases:
        entries = _entries(case.pk)
        assert [e.action_flag for e in entries] == [ADDITION, CHANGE, DELETION]
        assert all((e.object_repr, e.change_message) == (REDACTED, "") for e in entries)
        assert case.title not in _log_text()
    assert {e.object_repr for e in _entries(kept.pk)} == {str(kept)}


def test_a_deletion_outside_admin_redacts_too_and_a_rolled_back_one_does_not(dana: User) -> None:
    case = Case.objects.get(key="2026-047")
    _history(case, dana)
    with pytest.raises(RuntimeError), transaction.atomic():
        Case.objects.get(pk=case.pk).delete()
        raise RuntimeError("the deletion fails later in its transaction")
    assert {e.object_repr for e in _entries(case.pk)} == {str(case)}
    case_id = case.pk
    case.delete()
    assert {(e.object_repr, e.change_message) for e in _entries(case_id)} == {(REDACTED, "")}


def test_the_records_deleted_with_the_case_leave_no_text_either(dana: User) -> None:
    """A document edited in its own admin page logs its title; the case's deletion cascades to it."""
    case = Case.objects.get(key="2026-014")
    document = Document.objects.filter(case=case).order_by("pk").first()
    kept = Document.objects.exclude(case=case).order_by("pk").first()
    request = RequestFactory().post("/")
    request.user = dana
    for record in (document, kept):
        admin.site._registry[Document].log_change(request, record, [{"changed": {"fields": ["Title"]}}])
    assert _login(dana).post(_url("delete", case.pk), {"post": "yes"}).status_code == 302
    ct = ContentType.objects.get_for_model(Document)
    gone = LogEntry.objects.get(content_type=ct, object_id=str(document.pk))
    assert (gone.object_repr, gone.change_message, gone.action_flag, gone.user_id) == ("[deleted document]", "", CHANGE, dana.pk)
    assert document.title not in _log_text()
    assert LogEntry.objects.get(content_type=ct, object_id=str(kept.pk)).object_repr == str(kept)

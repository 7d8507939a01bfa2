"""The access ledger as a firm admin and an operator read it: admin pages, CSV, `memory_access`, deletion.

The cast's firm (tests/cast.py: a case, its owner, a teammate on it, an
outsider and the firm admin) beside the other firm, whose admin has a case
with a lawyer on it too (`theirs`). A firm admin's changelist, CSV export and
question page hold their firm's rows only, whatever ids they send; another
firm's case or user is answered like one that never existed. A deleted case
keeps its rows and nothing of its text.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client as HttpClient
from django.urls import reverse
from django.utils import timezone

from accounts.models import Firm, User
from graph_memory.models import AccessChange
from practice.models import Case
from tests.cast import Cast
from tests.factories import CaseFactory, UserFactory

pytestmark = pytest.mark.django_db

CHANGELIST = "admin:graph_memory_accesschange_changelist"
QUESTION = "admin:graph_memory_access_question"


@dataclass(frozen=True)
class Theirs:
    """The other firm's side: a case of theirs and a lawyer on its team (their admin is the cast's)."""

    firm: Firm
    lawyer: User
    case: Case


@pytest.fixture
def theirs(personas: Cast) -> Theirs:
    firm = personas.other_firm
    lawyer = UserFactory(firm=firm, username="theirs-lawyer")
    return Theirs(firm, lawyer, CaseFactory(firm=firm, title="Theirs secret merger", key="theirs-1", team=[lawyer]))


def _login(user: User) -> HttpClient:
    http = HttpClient()
    http.force_login(user)
    return http


def _csv(response: Any) -> list[dict[str, str]]:
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    return list(csv.DictReader(io.StringIO(response.content.decode())))


def test_a_firm_admin_sees_and_exports_their_firms_rows_only(personas: Cast, theirs: Theirs) -> None:
    ours = personas
    http = _login(ours.firm_admin)
    page = http.get(reverse(CHANGELIST))
    assert page.status_code == 200
    shown = page.context["cl"].result_list
    assert {row.firm_id for row in shown} == {ours.firm.pk}
    assert len(shown) == AccessChange.objects.filter(firm_id=ours.firm.pk).count()
    assert theirs.lawyer.username not in page.content.decode() and str(theirs.case.title) not in page.content.decode()
    # The export action, sent every row's id of both firms: their firm's rows only.
    every = list(AccessChange.objects.values_list("pk", flat=True))
    exported = _csv(http.post(reverse(CHANGELIST), {"action": "export_csv", "_selected_action": every}))
    assert {row["firm_id"] for row in exported} == {str(ours.firm.pk)}
    assert len(exported) == AccessChange.objects.filter(firm_id=ours.firm.pk).count()
    # Another firm's row answers 404, like a row that does not exist.
    theirs_row = AccessChange.objects.filter(firm_id=theirs.firm.pk).first()
    assert http.get(reverse("admin:graph_memory_accesschange_change", args=[theirs_row.pk])).status_code == 404
    # A lawyer sees nothing of it, on the case or not.
    for lawyer in (ours.owner, ours.teammate, ours.outsider):
        assert _login(lawyer).get(reverse(CHANGELIST)).status_code in (302, 403)


def test_the_question_page_answers_for_the_firm_only(personas: Cast, theirs: Theirs) -> None:
    ours = personas
    http = _login(ours.firm_admin)
    at = timezone.now().isoformat()
    page = http.get(reverse(QUESTION), {"case": ours.case.key, "at": at})
    assert page.status_code == 200 and not page.context["error"]
    assert {r[0] for r in page.context["rows"]} == {str(u.pk) for u in (ours.firm_admin, ours.teammate, ours.owner)}
    exported = _csv(http.get(reverse(QUESTION), {"case": ours.case.key, "at": at, "csv": "1"}))
    why = {row["id"]: row["why"] for row in exported}
    assert why == {
        str(ours.firm_admin.pk): "firm admin",
        str(ours.teammate.pk): "team grant",
        str(ours.owner.pk): "owner",
    }
    cases = http.get(reverse(QUESTION), {"user": ours.teammate.username, "at": at})
    assert [r[0] for r in cases.context["rows"]] == [str(ours.case.pk)]
    # Another firm's case and user, by reference, id or name: the answer for what does not exist.
    for asked in ({"case": theirs.case.key}, {"case": str(theirs.case.pk)}, {"case": "999999"}):
        page = http.get(reverse(QUESTION), {**asked, "at": at})
        assert page.context["answer"] is None and "no case with that reference or id" in page.context["error"]
    for asked in ({"user": theirs.lawyer.username}, {"user": str(theirs.lawyer.pk)}, {"user": "nobody-at-all"}):
        page = http.get(reverse(QUESTION), {**asked, "at": at})
        assert page.context["answer"] is None and "no user with that name or id" in page.context["error"]
    assert theirs.case.title not in http.get(reverse(QUESTION), {"case": str(theirs.case.pk)}).content.decode()


def test_a_deleted_case_keeps_its_rows_and_none_of_its_text(personas: Cast) -> None:
    ours = personas
    case_id, title = ours.case.pk, ours.case.title
    before = AccessChange.objects.filter(case_id=case_id).count()
    Case.objects.get(pk=case_id).delete()
    rows = AccessChange.objects.filter(case_id=case_id)
    assert rows.count() > before  # its own rows stay, and its deletion and the grants' ends are added
    assert rows.filter(kind=AccessChange.Kind.CASE, granted=False, reason=AccessChange.Reason.DELETED).count() == 1
    http = _login(ours.firm_admin)
    page = http.get(reverse(CHANGELIST)).content.decode()
    assert title not in page and f"[deleted case] #{case_id}" in page
    exported = _csv(http.post(reverse(CHANGELIST), {"action": "export_csv",
                                                    "_selected_action": list(rows.values_list("pk", flat=True))}))  # fmt: skip
    assert exported and all(row["case"] == f"[deleted case] #{case_id}" for row in exported)
    assert title not in str(exported)


def test_memory_access_answers_both_questions(personas: Cast, theirs: Theirs) -> None:
    ours, slug = personas, personas.firm.slug
    at = timezone.now().isoformat()
    out = io.StringIO()
    call_command("memory_access", firm=slug, case=ours.case.key, at=at, csv=True, stdout=out)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert {row["id"] for row in rows} == {str(u.pk) for u in (ours.firm_admin, ours.teammate, ours.owner)}
    out = io.StringIO()
    call_command("memory_access", firm=slug, user=ours.teammate.username, stdout=out)
    assert str(ours.case) in out.getvalue() and "team grant" in out.getvalue()
    day = timezone.localdate().isoformat()
    out = io.StringIO()
    call_command("memory_access", firm=slug, user=ours.firm_admin.username, **{"from": day, "to": day}, stdout=out)
    assert str(ours.case) in out.getvalue() and "firm admin" in out.getvalue()
    with pytest.raises(CommandError, match="no case"):
        call_command("memory_access", firm=slug, case=theirs.case.key)
    with pytest.raises(CommandError, match="unknown firm"):
        call_command("memory_access", firm="nope", case="1")
    with pytest.raises(CommandError, match="together"):
        call_command("memory_access", firm=slug, case=ours.case.key, **{"from": day})
    with pytest.raises(CommandError, match="not a date"):
        call_command("memory_access", firm=slug, case=ours.case.key, at="yesterday-ish")

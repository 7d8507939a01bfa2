"""The access ledger as a firm admin and an operator read it: admin pages, CSV, `memory_access`, deletion.

Two firms side by side, each with a case, a lawyer on it and an admin. A
firm admin's changelist, CSV export and question page hold their firm's rows
only, whatever ids they send; another firm's case or user is answered like
one that never existed. A deleted case keeps its rows and nothing of its text.
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
from practice.models import Case, CaseTeamMember
from tests.factories import CaseFactory, FirmFactory, UserFactory

pytestmark = pytest.mark.django_db

CHANGELIST = "admin:graph_memory_accesschange_changelist"
QUESTION = "admin:graph_memory_access_question"


@dataclass
class Side:
    firm: Firm
    admin: User
    lawyer: User
    case: Case


def _side(slug: str) -> Side:
    firm = FirmFactory(slug=slug)
    admin = UserFactory(firm=firm, username=f"{slug}-admin", role=User.Role.ADMIN)
    lawyer = UserFactory(firm=firm, username=f"{slug}-lawyer")
    case = CaseFactory(firm=firm, title=f"{slug.title()} secret merger", key=f"{slug}-1")
    CaseTeamMember.objects.create(case=case, user=lawyer, firm=firm)
    return Side(firm, admin, lawyer, case)


@pytest.fixture
def sides() -> tuple[Side, Side]:
    return _side("ours"), _side("theirs")


def _login(user: User) -> HttpClient:
    http = HttpClient()
    http.force_login(user)
    return http


def _csv(response: Any) -> list[dict[str, str]]:
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    return list(csv.DictReader(io.StringIO(response.content.decode())))


def test_a_firm_admin_sees_and_exports_their_firms_rows_only(sides: tuple[Side, Side]) -> None:
    ours, theirs = sides
    http = _login(ours.admin)
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
    # A lawyer sees nothing of it.
    assert _login(ours.lawyer).get(reverse(CHANGELIST)).status_code in (302, 403)


def test_the_question_page_answers_for_the_firm_only(sides: tuple[Side, Side]) -> None:
    ours, theirs = sides
    http = _login(ours.admin)
    at = timezone.now().isoformat()
    page = http.get(reverse(QUESTION), {"case": ours.case.key, "at": at})
    assert page.status_code == 200 and not page.context["error"]
    assert {r[0] for r in page.context["rows"]} == {str(u.pk) for u in (ours.admin, ours.lawyer, ours.case.owner)}
    exported = _csv(http.get(reverse(QUESTION), {"case": ours.case.key, "at": at, "csv": "1"}))
    why = {row["id"]: row["why"] for row in exported}
    assert why == {
        str(ours.admin.pk): "firm admin",
        str(ours.lawyer.pk): "team grant",
        str(ours.case.owner_id): "owner",
    }
    cases = http.get(reverse(QUESTION), {"user": ours.lawyer.username, "at": at})
    assert [r[0] for r in cases.context["rows"]] == [str(ours.case.pk)]
    # Another firm's case and user, by reference, id or name: the answer for what does not exist.
    for asked in ({"case": theirs.case.key}, {"case": str(theirs.case.pk)}, {"case": "999999"}):
        page = http.get(reverse(QUESTION), {**asked, "at": at})
        assert page.context["answer"] is None and "no case with that reference or id" in page.context["error"]
    for asked in ({"user": theirs.lawyer.username}, {"user": str(theirs.lawyer.pk)}, {"user": "nobody-at-all"}):
        page = http.get(reverse(QUESTION), {**asked, "at": at})
        assert page.context["answer"] is None and "no user with that name or id" in page.context["error"]
    assert theirs.case.title not in http.get(reverse(QUESTION), {"case": str(theirs.case.pk)}).content.decode()


def test_a_deleted_case_keeps_its_rows_and_none_of_its_text(sides: tuple[Side, Side]) -> None:
    ours, _ = sides
    case_id, title = ours.case.pk, ours.case.title
    before = AccessChange.objects.filter(case_id=case_id).count()
    Case.objects.get(pk=case_id).delete()
    rows = AccessChange.objects.filter(case_id=case_id)
    assert rows.count() > before  # its own rows stay, and its deletion and the grants' ends are added
    assert rows.filter(kind=AccessChange.Kind.CASE, granted=False, reason=AccessChange.Reason.DELETED).count() == 1
    http = _login(ours.admin)
    page = http.get(reverse(CHANGELIST)).content.decode()
    assert title not in page and f"[deleted case] #{case_id}" in page
    exported = _csv(http.post(reverse(CHANGELIST), {"action": "export_csv",
                                                    "_selected_action": list(rows.values_list("pk", flat=True))}))  # fmt: skip
    assert exported and all(row["case"] == f"[deleted case] #{case_id}" for row in exported)
    assert title not in str(exported)


def test_memory_access_answers_both_questions(sides: tuple[Side, Side]) -> None:
    ours, theirs = sides
    at = timezone.now().isoformat()
    out = io.StringIO()
    call_command("memory_access", firm="ours", case=ours.case.key, at=at, csv=True, stdout=out)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert {row["id"] for row in rows} == {str(u.pk) for u in (ours.admin, ours.lawyer, ours.case.owner)}
    out = io.StringIO()
    call_command("memory_access", firm="ours", user=ours.lawyer.username, stdout=out)
    assert str(ours.case) in out.getvalue() and "team grant" in out.getvalue()
    day = timezone.localdate().isoformat()
    out = io.StringIO()
    call_command("memory_access", firm="ours", user=ours.admin.username, **{"from": day, "to": day}, stdout=out)
    assert str(ours.case) in out.getvalue() and "firm admin" in out.getvalue()
    with pytest.raises(CommandError, match="no case"):
        call_command("memory_access", firm="ours", case=theirs.case.key)
    with pytest.raises(CommandError, match="unknown firm"):
        call_command("memory_access", firm="nope", case="1")
    with pytest.raises(CommandError, match="together"):
        call_command("memory_access", firm="ours", case=ours.case.key, **{"from": day})
    with pytest.raises(CommandError, match="not a date"):
        call_command("memory_access", firm="ours", case=ours.case.key, at="yesterday-ish")

"""The second host's adapter: how `graph_memory` reads `offices` and `matters`.

Named in settings as GRAPH_MEMORY["ADAPTER"]. A worked example for a product
shaped unlike the reference host: the firm is `LawOffice` (known by `code`),
the user `Attorney` (firm `office`, admin flag `manages_office`), a case a
`Matter` (`reference`, `name`, `lead`, `stage`); clients and adverse parties
are one `Party` model linked by `Engagement.role`; the team is `Assignment`
(reviewers may open a matter without being on its team); filings keep their
pages as rows; a bill's amount is the sum of its time entries. No
django-guardian: the wall's input is `member_case_ids`.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.postgres.expressions import ArraySubquery
from django.db.models import Case as SqlCase
from django.db.models import (
    CharField,
    Count,
    DecimalField,
    F,
    Func,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
    Value,
    When,
)
from django.db.models.fields import DateField
from django.db.models.functions import Cast, Coalesce, Concat, Left, NullIf
from django.utils import timezone

from graph_memory.adapter import (
    CaseHeader,
    Changes,
    DocumentRef,
    ManyToManyWatch,
    MemoryAdapter,
    NoteOrigin,
    Party,
    Record,
    SliceLimits,
    Watch,
)
from tests.second_host.matters.models import (
    Assignment,
    Bill,
    DueDate,
    Engagement,
    Filing,
    FilingPage,
    Matter,
    Memo,
    TimeEntry,
)
from tests.second_host.matters.models import Party as PartyRow
from tests.second_host.offices.models import Attorney

_STAGE = dict(Matter.Stage.choices)
CLIENT, ADVERSE = Engagement.Role.CLIENT, Engagement.Role.ADVERSE
CENT = Decimal("0.01")
LIVE_FACTS_MAX = 10  # per kind, in a brief


def _attorney_label(prefix: str = "") -> Any:
    return Coalesce(NullIf(F(f"{prefix}full_name"), Value("")), F(f"{prefix}username"))  # as Attorney.__str__


def _matter_label() -> Any:
    return Concat(F("reference"), Value(": "), F("name"), output_field=CharField())  # as Matter.__str__


def _client(matter: Any = None) -> QuerySet[Engagement]:
    return Engagement.objects.filter(matter_id=OuterRef("pk") if matter is None else matter, role=CLIENT)


def _adverse_names() -> ArraySubquery:
    return ArraySubquery(
        Engagement.objects.filter(matter_id=OuterRef("pk"), role=ADVERSE).order_by("party__name", "party_id")
        .values("party__name")
    )  # fmt: skip


def _scope(prefix: str, *, firm_id: int | None, case_id: int | None) -> dict[str, int]:
    if (firm_id is None) == (case_id is None):
        raise ValueError("give exactly one of firm_id and case_id")
    if firm_id is not None:
        return {f"{prefix}office_id": firm_id}
    return {f"{prefix}id" if prefix else "pk": case_id}  # type: ignore[dict-item]


def _bill_amount() -> Subquery:
    """A bill's amount: the sum of its time entries (hours x rate), 0 without any."""
    entries = (
        TimeEntry.objects.filter(bill_id=OuterRef("pk")).order_by().values("bill_id")
        .annotate(total=Sum(F("hours") * F("rate"), output_field=DecimalField(max_digits=20, decimal_places=4)))
        .values("total")
    )  # fmt: skip
    return Coalesce(Subquery(entries), Value(Decimal("0")), output_field=DecimalField(max_digits=20, decimal_places=4))


def _own_matter(instance: Any) -> list[int]:
    return [instance.matter_id]


def _matter_self(instance: Any) -> list[int]:
    return [instance.pk]


def _matters_of_party(party: Any) -> QuerySet[Matter]:
    return Matter.objects.filter(parties=party.pk)


def _matter_of_page(page: Any) -> QuerySet[Matter]:
    return Matter.objects.filter(filings=page.filing_id)


def _processed(values: Mapping[str, Any]) -> bool:
    return values["state"] == Filing.State.PROCESSED


def _filing_ref(filing: Any) -> list[tuple[int, str]]:
    return [(filing.matter_id, str(filing.pk))]


def _filing_of_page(page: Any) -> list[tuple[int, str]]:
    return list(Filing.objects.filter(pk=page.filing_id).values_list("matter_id", "pk").order_by())


class MattersMemoryAdapter(MemoryAdapter):
    case_firm_field = "office"
    firm_slug_field = "code"
    case_admin_search_fields = ("reference", "name")

    # --- who is asking ------------------------------------------------------------------------

    def viewer_firm_id(self, viewer: Any) -> int | None:
        return viewer.office_id

    def viewer_is_firm_admin(self, viewer: Any) -> bool:
        return viewer.office_id is not None and viewer.manages_office

    # --- the wall's input: no guardian, the matter's own links --------------------------------

    def member_case_ids(self, viewer: Any) -> QuerySet[Any]:
        assigned = Assignment.objects.filter(attorney_id=viewer.pk).values("matter_id")
        return Matter.objects.filter(Q(lead_id=viewer.pk) | Q(pk__in=assigned)).values("pk")

    def case_member_ids(self, *, case_id: int) -> QuerySet[Any]:
        # The reverse, for the write-back guard: who may open this matter (its lead and its team).
        assigned = Assignment.objects.filter(matter_id=case_id).values("attorney_id")
        led = Matter.objects.filter(pk=case_id).values("lead_id")
        return get_user_model().objects.filter(Q(pk__in=assigned) | Q(pk__in=led)).values("pk")

    # --- display and search -------------------------------------------------------------------

    def case_reference(self) -> Any:
        return F("reference")

    def case_title(self) -> Any:
        return F("name")

    def case_activity(self) -> Any:
        return F("last_touched")

    def case_header_annotations(self) -> dict[str, Any]:
        return {
            "reference": F("reference"),
            "title": F("name"),
            "status": SqlCase(
                *(When(stage=value, then=Value(label)) for value, label in _STAGE.items()),
                default=F("stage"),
                output_field=CharField(),
            ),
            "opened": F("opened_on"),
            "description": F("synopsis"),
            "client_name": Subquery(_client().values("party__name")[:1]),
            "counterparty_names": _adverse_names(),
        }

    # --- summary slice ------------------------------------------------------------------------

    def case_header(self, *, case_id: int, limits: SliceLimits) -> CaseHeader | None:
        row = (
            Matter.objects.filter(pk=case_id)
            .annotate(
                synopsis_head=Left("synopsis", limits.text_chars),
                client_id=Subquery(_client().values("party_id")[:1]),
                client_name=Subquery(_client().values("party__name")[:1]),
            )
            .values("pk", "office_id", "reference", "name", "stage", "opened_on", "synopsis_head", "client_id", "client_name")
            .first()
        )
        if row is None:
            return None
        adverse = (
            Engagement.objects.filter(matter_id=case_id, role=ADVERSE)
            .order_by("party__name", "party_id")
            .values_list("party_id", "party__name")[: limits.counterparties]
        )
        client = row["client_id"]
        return CaseHeader(
            case_id=row["pk"],
            firm_id=row["office_id"],
            reference=row["reference"],
            title=row["name"],
            status=_STAGE.get(row["stage"], row["stage"]),
            opened=row["opened_on"],
            description=row["synopsis_head"] or "",
            client=Party(str(client), row["client_name"], "client") if client is not None else None,
            counterparties=tuple(Party(str(pk), name, "counterparty") for pk, name in adverse),
        )

    def case_records(self, *, case_id: int, limits: SliceLimits) -> dict[str, list[Record]]:
        cap, chars = limits.per_kind, limits.text_chars
        pending = Q(state=DueDate.State.PENDING)
        due_dates = (
            DueDate.objects.filter(matter_id=case_id)
            # Pending first, soonest first; then met or waived, most recent first.
            .order_by(
                SqlCase(When(pending, then=Value(0)), default=Value(1), output_field=IntegerField()),
                SqlCase(When(pending, then=F("due_on")), default=Value(None), output_field=DateField()).asc(),
                F("due_on").desc(),
                "pk",
            )
            .values("pk", "label", "due_on", "state")[: cap["deadline"]]
        )
        bills = (
            Bill.objects.filter(matter_id=case_id)
            .annotate(amount=_bill_amount())
            .order_by("-issued_on", "-pk")
            .values("pk", "number", "issued_on", "currency", "state", "amount")[: cap["invoice"]]
        )
        memos = Memo.objects.filter(matter_id=case_id).order_by("-written_at", "-pk").annotate(text_head=Left("body", chars))
        notes = memos.filter(kind=Memo.Kind.FILE_NOTE).values("pk", "heading", "written_at", "text_head")[: cap["note"]]
        drafts = memos.filter(kind=Memo.Kind.DRAFT).values("pk", "heading", "written_at", "text_head")[: cap["draft"]]
        # The first pages only, each cut in SQL: a 500-page filing costs no more to read than a letter.
        first_pages = ArraySubquery(
            FilingPage.objects.filter(filing_id=OuterRef("pk")).order_by("number")
            .values(head=Left("text", chars))[: limits.pages_per_document]
        )  # fmt: skip
        filings = (
            Filing.objects.filter(matter_id=case_id, state=Filing.State.PROCESSED)
            .order_by("-filed_at", "-pk")
            .annotate(first_pages=first_pages)
            .values("pk", "title", "filed_at", "first_pages")[: cap["document"]]
        )
        return {
            "deadline": [
                Record("deadline", str(d["pk"]), title=d["label"], date=d["due_on"],
                       fields={"title": d["label"], "due": d["due_on"], "done": d["state"] != DueDate.State.PENDING})
                for d in due_dates
            ],
            "invoice": [
                Record("invoice", str(b["pk"]), title=b["number"], date=b["issued_on"], fields={
                    "number": b["number"], "issued": b["issued_on"], "amount": b["amount"].quantize(CENT),
                    "currency": b["currency"], "status": b["state"],
                })
                for b in bills
            ],
            "note": [
                Record("note", str(n["pk"]), title=n["heading"], date=n["written_at"], text=n["text_head"] or "")
                for n in notes
            ],
            "draft": [
                Record("draft", str(d["pk"]), title=d["heading"], date=d["written_at"], text=d["text_head"] or "")
                for d in drafts
            ],
            "document": [
                Record("document", str(f["pk"]), title=f["title"], date=f["filed_at"], pages=tuple(f["first_pages"] or ()))
                for f in filings
            ],
        }  # fmt: skip

    # --- one record in full, and assistant-filed notes (memos of kind file note) ----------------

    def case_record(self, *, case_id: int, kind: str, key: str, page: int | None = None) -> Record | None:
        if not key.isdigit() or len(key) > 18:
            return None  # keys here are primary keys
        mine = {"matter_id": case_id, "pk": int(key)}
        if kind == "deadline":
            d = DueDate.objects.filter(**mine).values("label", "due_on", "state").first()
            return d and Record("deadline", key, title=d["label"], date=d["due_on"], fields={
                "title": d["label"], "due": d["due_on"], "done": d["state"] != DueDate.State.PENDING})
        if kind == "invoice":
            b = Bill.objects.filter(**mine).annotate(amount=_bill_amount()).values(
                "number", "issued_on", "currency", "state", "amount").first()
            return b and Record("invoice", key, title=b["number"], date=b["issued_on"], fields={
                "number": b["number"], "issued": b["issued_on"], "amount": b["amount"].quantize(CENT),
                "currency": b["currency"], "status": b["state"]})
        if kind in ("note", "draft"):
            memo_kind = Memo.Kind.FILE_NOTE if kind == "note" else Memo.Kind.DRAFT
            m = Memo.objects.filter(**mine, kind=memo_kind).values(
                "heading", "written_at", "body", "origin", author_name=_attorney_label("author__")).first()
            if m is None:
                return None
            fields = {"author": m["author_name"] or "", "origin": m["origin"]} if kind == "note" else {}
            return Record(kind, key, title=m["heading"], date=m["written_at"], text=m["body"], fields=fields)
        if kind == "document" and page is not None:
            f = (
                Filing.objects.filter(**mine, state=Filing.State.PROCESSED)
                .annotate(
                    page_text=Subquery(FilingPage.objects.filter(filing_id=OuterRef("pk"), number=page).values("text")[:1]),
                    page_count=Subquery(FilingPage.objects.filter(filing_id=OuterRef("pk")).order_by()
                                        .values("filing_id").annotate(n=Count("pk")).values("n")[:1]),
                )
                .values("title", "filed_at", "page_text", "page_count")
                .first()
            )
            if f is None or f["page_text"] is None:
                return None
            return Record("document", key, title=f["title"], date=f["filed_at"], pages=(f["page_text"],),
                          fields={"page_count": f["page_count"]})
        return None  # fmt: skip

    def file_note(self, *, case_id: int, author: Any, title: str, text: str, origin: NoteOrigin) -> Record:
        memo = Memo.objects.create(
            matter_id=case_id, author=author, kind=Memo.Kind.FILE_NOTE, heading=title, body=text,
            written_at=timezone.now(),
            origin={"conversation_id": origin.conversation_id, "message_ids": list(origin.message_ids)},
        )  # fmt: skip
        return Record("note", str(memo.pk), title=memo.heading, date=memo.written_at, text=memo.body)

    def live_fact_annotations(self) -> dict[str, Any]:
        # Read at request time inside the brief's one query, each bounded: last night's summary may be
        # older than a due date met this morning.
        pending = (
            DueDate.objects.filter(matter_id=OuterRef("pk"), state=DueDate.State.PENDING)
            .order_by("due_on", "pk")
            .values(fact=Concat(Value("open deadline “"), "label", Value("” due "), Cast("due_on", CharField())))
        )
        unpaid = (
            Bill.objects.filter(matter_id=OuterRef("pk"), state=Bill.State.ISSUED)
            .annotate(amount=_bill_amount())
            .order_by("issued_on", "pk")
            .values(fact=Concat(
                Value("unpaid bill "), "number", Value(": "), "currency", Value(" "),
                Func(F("amount"), Value("FM999,999,999,990.00"), function="to_char", output_field=CharField()),
                output_field=CharField(),
            ))
        )  # fmt: skip
        return {"open_due_dates": ArraySubquery(pending[:LIVE_FACTS_MAX]), "unpaid_bills": ArraySubquery(unpaid[:LIVE_FACTS_MAX])}

    # --- long documents: a filing's pages are rows -------------------------------------------

    def case_documents(self, *, case_id: int) -> list[DocumentRef]:
        rows = (
            Filing.objects.filter(matter_id=case_id, state=Filing.State.PROCESSED)
            .order_by("-filed_at", "-pk")
            .annotate(page_count=Coalesce(
                Subquery(FilingPage.objects.filter(filing_id=OuterRef("pk")).order_by().values("filing_id")
                         .annotate(n=Count("pk")).values("n")[:1]), Value(0)))
            .values_list("pk", "title", "page_count")
        )  # fmt: skip
        return [DocumentRef(str(pk), title, count) for pk, title, count in rows]

    def document_pages(self, *, case_id: int, key: str, first: int = 1, last: int | None = None) -> list[str]:
        if not key.isdigit():
            return []
        pages = FilingPage.objects.filter(
            filing_id=int(key), filing__matter_id=case_id, filing__state=Filing.State.PROCESSED, number__gte=first
        )
        if last is not None:
            pages = pages.filter(number__lte=last)
        return list(pages.order_by("number").values_list("text", flat=True))

    # --- the connection map -------------------------------------------------------------------

    def graph_case_headers(self, *, firm_id: int | None = None, case_id: int | None = None) -> QuerySet[Any]:
        # A matter without a client yet (an enquiry) has a null client_ref: no "is for" edge.
        return (
            Matter.objects.filter(**_scope("", firm_id=firm_id, case_id=case_id))
            .annotate(_client_ref=Subquery(_client().values("party_id")[:1]))
            .order_by()
            .values(
                case_ref=F("id"),
                firm_ref=F("office_id"),
                case_label=_matter_label(),
                owner_ref=F("lead_id"),
                owner_label=_attorney_label("lead__"),
                client_ref=F("_client_ref"),
                client_label=Subquery(_client().values("party__name")[:1]),
            )
        )

    def graph_team_links(self, *, firm_id: int | None = None, case_id: int | None = None) -> QuerySet[Any]:
        # Reviewers may open the matter but are not on its team.
        return (
            Assignment.objects.filter(**_scope("matter__", firm_id=firm_id, case_id=case_id))
            .exclude(capacity=Assignment.Capacity.REVIEWER)
            .order_by()
            .values(case_ref=F("matter_id"), user_ref=F("attorney_id"), user_label=_attorney_label("attorney__"))
        )

    def graph_counterparty_links(self, *, firm_id: int | None = None, case_id: int | None = None) -> QuerySet[Any]:
        return (
            Engagement.objects.filter(**_scope("matter__", firm_id=firm_id, case_id=case_id), role=ADVERSE)
            .order_by()
            .values(case_ref=F("matter_id"), party_ref=F("party_id"), party_label=F("party__name"))
        )

    def graph_label(self, *, kind: str, ref_id: int) -> str | None:
        model, label = {
            "lawyer": (Attorney, _attorney_label()),
            "case": (Matter, _matter_label()),
            "client": (PartyRow, F("name")),
            "counterparty": (PartyRow, F("name")),
        }[kind]
        return model.objects.filter(pk=ref_id).values_list(label, flat=True).first()

    def graph_linked_case_ids(self, instance: Any) -> list[int]:
        if isinstance(instance, PartyRow):
            links = Engagement.objects.filter(party_id=instance.pk)
        else:
            links = Assignment.objects.filter(attorney_id=instance.pk)
        return list(links.values_list("matter_id", flat=True))

    # --- what changes matter ------------------------------------------------------------------

    def changes(self) -> Changes:
        return Changes(
            stale=[
                Watch(Matter, _matter_self, fields=("reference", "name", "stage", "opened_on", "synopsis")),
                # Summaries read processed filings only: one still being scanned changes nothing.
                Watch(Filing, _own_matter, fields=("state",), only_when_changed=False, relevant=_processed),
                Watch(FilingPage, _matter_of_page),
                # A time entry changes its bill's amount.
                *(Watch(model, _own_matter) for model in (Memo, DueDate, Bill, TimeEntry, Engagement)),
                # Every matter a party is engaged on quotes its name.
                Watch(PartyRow, _matters_of_party, fields=("name",), on_create=False),
            ],
            graph=[
                Watch(Matter, _matter_self, fields=("reference", "name", "lead_id")),
                Watch(Assignment, _own_matter),
                Watch(Engagement, _own_matter),
                # One Party model stands for both node kinds, and `labels` takes one kind a model:
                # a renamed party re-syncs the matters it is engaged on, which relabels either node.
                Watch(PartyRow, _matters_of_party, fields=("name",), on_create=False),
            ],
            m2m=[ManyToManyWatch(Assignment, stale=False), ManyToManyWatch(Engagement)],
            labels={Attorney: "lawyer"},
            label_fields={Attorney: ("full_name", "username")},
            # A filing's routing index: the filing's state, or any of its page rows.
            documents=[
                Watch(Filing, _filing_ref, fields=("state",), only_when_changed=False, relevant=_processed),
                Watch(FilingPage, _filing_of_page),
            ],
        )

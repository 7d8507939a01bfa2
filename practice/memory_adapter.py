"""The reference host's adapter: how `graph_memory` reads this product's records.

Named in settings as GRAPH_MEMORY["ADAPTER"] = "practice.memory_adapter.PracticeMemoryAdapter".
This is the only place that knows both the memory's neutral shapes and this
product's models and fields.
"""

from __future__ import annotations

import secrets
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.postgres.expressions import ArraySubquery
from django.db import connection
from django.db.models import Case as SqlCase
from django.db.models import CharField, F, Func, IntegerField, OuterRef, QuerySet, Value, When, Window
from django.db.models.expressions import RawSQL
from django.db.models.fields import DateField
from django.db.models.functions import Cast, Coalesce, Concat, Left, NullIf, RowNumber
from django.urls import reverse
from django.utils import timezone

from graph_memory.adapter import (
    CaseHeader,
    Changes,
    DocumentRef,
    GuardianPermissions,
    ManyToManyWatch,
    MemoryAdapter,
    NoteOrigin,
    Party,
    Record,
    SliceLimits,
    Watch,
)
from practice import memory_lint
from practice.models import (
    Case,
    CaseCounterparty,
    CaseGroupObjectPermission,
    CaseTeamMember,
    CaseUserObjectPermission,
    Client,
    Counterparty,
    Deadline,
    Document,
    Draft,
    Invoice,
    Note,
)

_STATUS = dict(Case.Status.choices)
LIVE_FACTS_MAX = 10  # of each kind, in a brief
_INVOICE_STATUS = dict(Invoice.Status.choices)


def _lawyer_label(prefix: str = "") -> Any:
    return Coalesce(NullIf(F(f"{prefix}name"), Value("")), F(f"{prefix}username"))  # as User.__str__


def _case_label() -> Any:
    return Concat(F("key"), Value(" "), F("title"), output_field=CharField())  # as Case.__str__


def _scope(prefix: str, *, firm_id: int | None, case_id: int | None) -> dict[str, int]:
    if (firm_id is None) == (case_id is None):
        raise ValueError("give exactly one of firm_id and case_id")
    return {"firm_id": firm_id} if firm_id is not None else {f"{prefix}id": case_id}  # type: ignore[dict-item]


def _status_label(expression: str, labels: Mapping[str, str]) -> SqlCase:
    return SqlCase(
        *(When(**{expression: value}, then=Value(label)) for value, label in labels.items()),
        default=F(expression),
        output_field=CharField(),
    )


_RECORD_MODELS = {"deadline": Deadline, "invoice": Invoice, "note": Note, "draft": Draft, "document": Document}


def _own_case(instance: Any) -> list[int]:
    return [instance.case_id]


def _document_ref(document: Any) -> list[tuple[int, str]]:
    return [(document.case_id, document.key)]


def _record_querysets(limits: SliceLimits) -> dict[str, QuerySet[Any]]:
    """Each kind's records as the summary slice reads them, in its order, not yet cut to a case or a count."""
    chars = limits.text_chars
    # Only the first pages of each document, each cut in SQL, so a 500-page
    # scan costs no more to read than a one-page letter.
    pages_sql = (
        f"ARRAY(SELECT left(p, %s) FROM unnest({connection.ops.quote_name(Document._meta.db_table)}.pages[1:%s]) "
        "WITH ORDINALITY AS u(p, n) ORDER BY n)"
    )
    return {
        "deadline": Deadline.objects.order_by(
            # Open deadlines first, soonest first; then done ones, most recent first.
            "done",
            SqlCase(When(done=False, then=F("due")), default=Value(None), output_field=DateField()).asc(),
            F("due").desc(),
            "key",
        ).values("key", "title", "due", "done"),
        "invoice": Invoice.objects.order_by("-issued", "-id").values(
            "key", "number", "issued", "amount", "currency", "status"
        ),
        "note": Note.objects.order_by("-created", "-id").annotate(text_head=Left("text", chars))
        .values("key", "title", "created", "text_head"),
        "draft": Draft.objects.order_by("-created", "-id").annotate(text_head=Left("text", chars))
        .values("key", "title", "created", "text_head"),
        "document": Document.objects.filter(status=Document.Status.PROCESSED).order_by("-created", "-id")
        .annotate(first_pages=RawSQL(pages_sql, (chars, limits.pages_per_document)))
        .values("key", "title", "created", "first_pages"),
    }  # fmt: skip


_RECORD_OF = {
    "deadline": lambda d: Record("deadline", d["key"], title=d["title"], date=d["due"],
                                 fields={"title": d["title"], "due": d["due"], "done": d["done"]}),
    "invoice": lambda i: Record("invoice", i["key"], title=i["number"], date=i["issued"], fields={
        "number": i["number"], "issued": i["issued"], "amount": i["amount"], "currency": i["currency"],
        "status": i["status"],
    }),
    "note": lambda n: Record("note", n["key"], title=n["title"], date=n["created"], text=n["text_head"] or ""),
    "draft": lambda d: Record("draft", d["key"], title=d["title"], date=d["created"], text=d["text_head"] or ""),
    "document": lambda d: Record("document", d["key"], title=d["title"], date=d["created"],
                                 pages=tuple(d["first_pages"] or ())),
}  # fmt: skip


class PracticeMemoryAdapter(MemoryAdapter):
    case_firm_field = "firm"
    case_owner_field = "owner"
    case_client_field = "client"
    firm_slug_field = "slug"
    case_admin_search_fields = ("key", "title")

    def guardian_permissions(self) -> GuardianPermissions:
        return GuardianPermissions(CaseUserObjectPermission, CaseGroupObjectPermission, "view_case")

    def case_reference(self) -> Any:
        return F("key")

    def case_title(self) -> Any:
        return F("title")

    def case_activity(self) -> Any:
        return F("updated_at")

    def case_header_annotations(self) -> dict[str, Any]:
        against = CaseCounterparty.objects.filter(case_id=OuterRef("pk")).order_by("counterparty__name", "pk")
        return {
            "reference": F("key"),
            "title": F("title"),
            "status": _status_label("status", _STATUS),
            "opened": F("opened"),
            "description": F("description"),
            "client_name": F("client__name"),
            "counterparty_names": ArraySubquery(against.values("counterparty__name")),
        }

    # --- summary slice ------------------------------------------------------------------------

    def case_header(self, *, case_id: int, limits: SliceLimits) -> CaseHeader | None:
        row = (
            Case.objects.filter(pk=case_id)
            .values("pk", "firm_id", "key", "title", "status", "opened", "client__key", "client__name")
            .annotate(description_head=Left("description", limits.text_chars))
            .first()
        )
        if row is None:
            return None
        counterparties = (
            CaseCounterparty.objects.filter(case_id=case_id)
            .order_by("counterparty__name", "counterparty__key")
            .values_list("counterparty__key", "counterparty__name")[: limits.counterparties]
        )
        return CaseHeader(
            case_id=row["pk"],
            firm_id=row["firm_id"],
            reference=row["key"],
            title=row["title"],
            status=_STATUS.get(row["status"], row["status"]),
            opened=row["opened"],
            description=row["description_head"] or "",
            client=Party(row["client__key"], row["client__name"], "client"),
            counterparties=tuple(Party(key, name, "counterparty") for key, name in counterparties),
        )

    def case_records(self, *, case_id: int, limits: SliceLimits) -> dict[str, list[Record]]:
        cap = limits.per_kind
        found = {kind: queryset.filter(case_id=case_id)[: cap[kind]] for kind, queryset in _record_querysets(limits).items()}
        return {kind: [_RECORD_OF[kind](row) for row in rows] for kind, rows in found.items()}

    def cases_records(self, *, case_ids: Sequence[int], limits: SliceLimits) -> dict[int, dict[str, list[Record]]]:
        # One query per kind, whatever the number of cases: each case's first `cap` rows by the
        # same order as case_records, ranked in SQL.
        found: dict[int, dict[str, list[Record]]] = {case_id: {kind: [] for kind in _RECORD_OF} for case_id in case_ids}
        for kind, queryset in _record_querysets(limits).items():
            ranked = (
                queryset.filter(case_id__in=list(case_ids))
                .annotate(_rank=Window(RowNumber(), partition_by=[F("case_id")], order_by=queryset.query.order_by))
                .filter(_rank__lte=limits.per_kind[kind])
                .values(*queryset.query.values_select, *queryset.query.annotation_select, "case_id")
            )
            for row in ranked:
                found[row["case_id"]][kind].append(_RECORD_OF[kind](row))
        return found

    def lint_records(self, *, firm_id: int, cited: Mapping[str, Collection[tuple[int, str]]]) -> list[tuple[int, Record]]:
        return memory_lint.lint_records(firm_id=firm_id, cited=cited)

    def case_record_count(self) -> Any:
        return memory_lint.case_record_count()

    # --- one record in full, and assistant-filed notes -----------------------------------------

    def case_record(self, *, case_id: int, kind: str, key: str, page: int | None = None) -> Record | None:
        mine = {"case_id": case_id, "key": key}
        if kind == "deadline":
            d = Deadline.objects.filter(**mine).values("title", "due", "done").first()
            return d and Record("deadline", key, title=d["title"], date=d["due"], fields=d)
        if kind == "invoice":
            i = Invoice.objects.filter(**mine).values("number", "issued", "amount", "currency", "status").first()
            return i and Record("invoice", key, title=i["number"], date=i["issued"], fields=i)
        if kind == "note":
            n = (
                Note.objects.filter(**mine)
                .values("title", "created", "text", "origin", author_name=_lawyer_label("author__"))
                .first()
            )
            return n and Record("note", key, title=n["title"], date=n["created"], text=n["text"],
                                fields={"author": n["author_name"] or "", "origin": n["origin"]})
        if kind == "draft":
            d = Draft.objects.filter(**mine).values("title", "created", "text").first()
            return d and Record("draft", key, title=d["title"], date=d["created"], text=d["text"])
        if kind == "document" and page is not None:
            # One page and the page count, in SQL: a 500-page scan is not read to serve its page 2.
            table = connection.ops.quote_name(Document._meta.db_table)
            d = (
                Document.objects.filter(**mine, status=Document.Status.PROCESSED)
                .annotate(page_text=RawSQL(f"{table}.pages[%s]", (page,)),
                          page_count=RawSQL(f"cardinality({table}.pages)", ()))
                .values("title", "created", "page_text", "page_count")
                .first()
            )
            if d is None or d["page_text"] is None:
                return None
            return Record("document", key, title=d["title"], date=d["created"], pages=(d["page_text"],),
                          fields={"page_count": d["page_count"]})
        return None  # fmt: skip

    def file_note(self, *, case_id: int, author: Any, title: str, text: str, origin: NoteOrigin) -> Record:
        firm_id = Case.objects.filter(pk=case_id).values_list("firm_id", flat=True).get()
        # A random key: unique within the case (the constraint holds it), saying nothing of how many notes exist.
        note = Note.objects.create(
            firm_id=firm_id, case_id=case_id, key=f"asst-{secrets.token_hex(6)}", author=author,
            created=timezone.now(), title=title, text=text,
            origin={"conversation_id": origin.conversation_id, "message_ids": list(origin.message_ids)},
        )  # fmt: skip
        return Record("note", note.key, title=note.title, date=note.created, text=note.text)

    def live_fact_annotations(self) -> dict[str, Any]:
        open_deadlines = (
            Deadline.objects.filter(case_id=OuterRef("pk"), done=False)
            .order_by("due", "key")
            .values(fact=Concat(Value("open deadline “"), "title", Value("” due "), Cast("due", CharField())))
        )
        unpaid = (
            Invoice.objects.filter(case_id=OuterRef("pk"), status=Invoice.Status.SENT)
            .order_by("issued", "key")
            .values(fact=Concat(
                Value("unpaid invoice "), "number", Value(" issued "), Cast("issued", CharField()), Value(": "),
                "currency", Value(" "),
                Func(F("amount"), Value("FM999,999,999,990.00"), function="to_char", output_field=CharField()),
                output_field=CharField(),
            ))
        )  # fmt: skip
        return {
            "open_deadlines": ArraySubquery(open_deadlines[:LIVE_FACTS_MAX]),
            "unpaid_invoices": ArraySubquery(unpaid[:LIVE_FACTS_MAX]),
        }

    # --- long documents -----------------------------------------------------------------------

    def case_documents(self, *, case_id: int) -> list[DocumentRef]:
        rows = (
            Document.objects.filter(case_id=case_id, status=Document.Status.PROCESSED)
            .order_by("-created", "-id")
            .annotate(page_count=Coalesce(Func(F("pages"), function="cardinality", output_field=IntegerField()), Value(0)))
            .values_list("key", "title", "page_count")
        )
        return [DocumentRef(key, title, count) for key, title, count in rows]

    def document_pages(self, *, case_id: int, key: str, first: int = 1, last: int | None = None) -> list[str]:
        # Sliced in SQL: asking for three pages of a 400-page scan reads three pages.
        table = connection.ops.quote_name(Document._meta.db_table)
        pages_sql = f"{table}.pages[%s:COALESCE(%s, cardinality({table}.pages))]"
        pages = (
            Document.objects.filter(case_id=case_id, key=key, status=Document.Status.PROCESSED)
            .annotate(wanted=RawSQL(pages_sql, (max(int(first), 1), last)))
            .values_list("wanted", flat=True)
            .first()
        )
        return list(pages or [])

    # --- the connection map -------------------------------------------------------------------

    def graph_case_headers(self, *, firm_id: int | None = None, case_id: int | None = None) -> QuerySet[Any]:
        return Case.objects.filter(**_scope("", firm_id=firm_id, case_id=case_id)).order_by().values(
            case_ref=F("id"),
            firm_ref=F("firm_id"),
            case_label=_case_label(),
            owner_ref=F("owner_id"),
            owner_label=_lawyer_label("owner__"),
            client_ref=F("client_id"),
            client_label=F("client__name"),
        )

    def graph_team_links(self, *, firm_id: int | None = None, case_id: int | None = None) -> QuerySet[Any]:
        return CaseTeamMember.objects.filter(**_scope("case_", firm_id=firm_id, case_id=case_id)).order_by().values(
            case_ref=F("case_id"), user_ref=F("user_id"), user_label=_lawyer_label("user__")
        )

    def graph_counterparty_links(self, *, firm_id: int | None = None, case_id: int | None = None) -> QuerySet[Any]:
        return CaseCounterparty.objects.filter(**_scope("case_", firm_id=firm_id, case_id=case_id)).order_by().values(
            case_ref=F("case_id"), party_ref=F("counterparty_id"), party_label=F("counterparty__name")
        )

    def graph_label(self, *, kind: str, ref_id: int) -> str | None:
        model, label = {
            "lawyer": (get_user_model(), _lawyer_label()),
            "case": (Case, _case_label()),
            "client": (Client, F("name")),
            "counterparty": (Counterparty, F("name")),
        }[kind]
        return model.objects.filter(pk=ref_id).values_list(label, flat=True).first()

    def graph_linked_case_ids(self, instance: Any) -> list[int]:
        if isinstance(instance, Counterparty):
            links = CaseCounterparty.objects.filter(counterparty_id=instance.pk)
        else:
            links = CaseTeamMember.objects.filter(user_id=instance.pk)
        return list(links.values_list("case_id", flat=True))

    def record_admin_urls(self, *, case_id: int, source_ids: Sequence[str]) -> dict[str, str]:
        case = Case.objects.filter(pk=case_id).values("firm_id").first()
        if case is None:
            return {}
        wanted: dict[str, set[str]] = {}
        for source_id in source_ids:
            kind, _, key = source_id.partition(":")
            wanted.setdefault(kind, set()).add(key.partition("#")[0])
        found: dict[tuple[str, str], str] = {}
        if "case" in wanted:
            found["case", "header"] = reverse("admin:practice_case_change", args=[case_id])
        by_case = {"case_id": case_id}
        for kind, model, scope in (
            ("client", Client, {"firm_id": case["firm_id"]}),
            ("counterparty", Counterparty, {"firm_id": case["firm_id"]}),
            *((kind, model, by_case) for kind, model in _RECORD_MODELS.items()),
        ):
            if kind in wanted:  # one query per kind cited, at most seven
                for pk, key in model.objects.filter(**scope, key__in=wanted[kind]).values_list("pk", "key"):
                    found[kind, key] = reverse(f"admin:practice_{model._meta.model_name}_change", args=[pk])
        urls = {}
        for source_id in source_ids:
            kind, _, key = source_id.partition(":")
            url = found.get((kind, key.partition("#")[0]))
            if url:
                urls[source_id] = url
        return urls

    # --- what changes matter ------------------------------------------------------------------

    def changes(self) -> Changes:
        def processed(values: Mapping[str, Any]) -> bool:
            return values["status"] == Document.Status.PROCESSED

        def case_self(instance: Any) -> list[int]:
            return [instance.pk]

        return Changes(
            stale=[
                Watch(Case, case_self, fields=("key", "title", "status", "opened", "description", "client_id")),
                # Summaries read processed documents only: one still uploading changes nothing.
                Watch(Document, _own_case, fields=("status",), only_when_changed=False, relevant=processed),
                *(Watch(model, _own_case) for model in (Draft, Deadline, Invoice, Note, CaseCounterparty)),
                # Every case naming a party quotes its name and key.
                Watch(Client, lambda c: Case.objects.filter(client_id=c.pk), fields=("key", "name"), on_create=False),
                Watch(
                    Counterparty,
                    lambda c: Case.objects.filter(counterparties=c.pk),
                    fields=("key", "name"),
                    on_create=False,
                ),
            ],
            graph=[
                Watch(Case, case_self, fields=("key", "title", "owner_id", "client_id")),
                Watch(CaseTeamMember, _own_case),
                Watch(CaseCounterparty, _own_case),
            ],
            m2m=[ManyToManyWatch(CaseTeamMember, stale=False), ManyToManyWatch(CaseCounterparty)],
            labels={Client: "client", Counterparty: "counterparty", get_user_model(): "lawyer"},
            label_fields={get_user_model(): ("name", "username")},
            # A processed document saved (its pages may have changed) or deleted: its routing index.
            documents=[
                Watch(Document, _document_ref, fields=("status",), only_when_changed=False, relevant=processed),
            ],
        )

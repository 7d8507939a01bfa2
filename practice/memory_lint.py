"""The reference host's answers to the lint pass: the live records behind stored summaries, in bulk.

One query per kind of record asked, whatever the number of cases (see
`MemoryAdapter.lint_records`); `PracticeMemoryAdapter` delegates here.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from django.db.models import Count, OuterRef, Subquery, Value
from django.db.models.expressions import RawSQL
from django.db.models.functions import Coalesce

from graph_memory.adapter import Record
from practice.models import Case, CaseCounterparty, Deadline, Document, Draft, Invoice, Note

_STATUS = dict(Case.Status.choices)


def _any(values: set[Any], sql_type: str) -> RawSQL:
    """A subquery over one array parameter, for `__in`: 10,000 ids cost one parameter, not 10,000."""
    return RawSQL(f"SELECT unnest(%s::{sql_type}[])", (sorted(values),))


def lint_records(*, firm_id: int, cited: Mapping[str, Collection[tuple[int, str]]]) -> list[tuple[int, Record]]:
    found: list[tuple[int, Record]] = []

    def asked(kind: str) -> tuple[set[tuple[int, str]], dict[str, Any]]:
        pairs = set(cited.get(kind, ()))
        # A superset by case and key, cut to the exact pairs below: still one query.
        scope = {
            "firm_id": firm_id,
            "case_id__in": _any({c for c, _ in pairs}, "bigint"),
            "key__in": _any({k for _, k in pairs}, "text"),
        }
        return pairs, scope

    if cited.get("header"):
        rows = Case.objects.filter(firm_id=firm_id, pk__in=_any({c for c, _ in cited["header"]}, "bigint")).values_list(
            "pk", "key", "title", "status", "opened", "description"
        )
        for pk, key, title, status, opened, description in rows:
            fields = {"reference": key, "title": title, "status": _STATUS.get(status, status), "opened": opened}
            found.append((pk, Record("header", "header", title=title, text=description, fields=fields)))
    if cited.get("client"):
        pairs = set(cited["client"])
        rows = Case.objects.filter(firm_id=firm_id, pk__in=_any({c for c, _ in pairs}, "bigint")).values_list(
            "pk", "client__key", "client__name"
        )
        found += [
            (pk, Record("client", key, title=name, fields={"name": name, "role": "client"}))
            for pk, key, name in rows
            if (pk, key) in pairs
        ]
    if cited.get("counterparty"):
        pairs = set(cited["counterparty"])
        rows = CaseCounterparty.objects.filter(
            firm_id=firm_id,
            case_id__in=_any({c for c, _ in pairs}, "bigint"),
            counterparty__key__in=_any({k for _, k in pairs}, "text"),
        ).values_list("case_id", "counterparty__key", "counterparty__name")
        found += [
            (pk, Record("counterparty", key, title=name, fields={"name": name, "role": "counterparty"}))
            for pk, key, name in rows
            if (pk, key) in pairs
        ]
    if cited.get("deadline"):
        pairs, scope = asked("deadline")
        for d in Deadline.objects.filter(**scope).values("case_id", "key", "title", "due", "done"):
            if (d["case_id"], d["key"]) in pairs:
                fields = {"title": d["title"], "due": d["due"], "done": d["done"]}
                found.append(
                    (d["case_id"], Record("deadline", d["key"], title=d["title"], date=d["due"], fields=fields))
                )
    if cited.get("invoice"):
        pairs, scope = asked("invoice")
        for i in Invoice.objects.filter(**scope).values(
            "case_id", "key", "number", "issued", "amount", "currency", "status"
        ):
            if (i["case_id"], i["key"]) in pairs:
                fields = {k: i[k] for k in ("number", "issued", "amount", "currency", "status")}
                found.append(
                    (i["case_id"], Record("invoice", i["key"], title=i["number"], date=i["issued"], fields=fields))
                )
    for kind, model in (("note", Note), ("draft", Draft)):  # the same shape: a title and a text
        if cited.get(kind):
            pairs, scope = asked(kind)
            rows = model.objects.filter(**scope).values_list("case_id", "key", "title", "created", "text")
            found += [
                (case_id, Record(kind, key, title=title, date=created, text=text))
                for case_id, key, title, created, text in rows
                if (case_id, key) in pairs
            ]
    if cited.get("document"):
        pairs, scope = asked("document")
        rows = Document.objects.filter(**scope, status=Document.Status.PROCESSED).values_list(
            "case_id", "key", "title", "created", "pages"
        )
        found += [
            (case_id, Record("document", key, title=title, date=created, pages=tuple(pages or ())))
            for case_id, key, title, created, pages in rows
            if (case_id, key) in pairs
        ]
    return found


def _count(model: Any) -> Any:
    rows = model.objects.filter(case_id=OuterRef("pk")).order_by().values("case_id").annotate(n=Count("pk")).values("n")
    return Coalesce(Subquery(rows), Value(0))


def case_record_count() -> Any:
    """Records of every kind a summary slice reads (documents: processed ones only)."""
    processed = Document.objects.filter(case_id=OuterRef("pk"), status=Document.Status.PROCESSED)
    documents = Coalesce(Subquery(processed.order_by().values("case_id").annotate(n=Count("pk")).values("n")), Value(0))
    return _count(Deadline) + _count(Invoice) + _count(Note) + _count(Draft) + documents

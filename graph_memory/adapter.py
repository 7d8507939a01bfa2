"""The one door to the host product: what the memory reads from the host, in host-neutral shapes.

A host plugs the memory in with two model settings (`GRAPH_MEMORY_CASE_MODEL`,
`GRAPH_MEMORY_FIRM_MODEL`) and one adapter, `GRAPH_MEMORY["ADAPTER"] =
"dotted.path.Class"`, a subclass of `MemoryAdapter`. Nothing else in
`graph_memory` names a host model or field; every module asks
`get_adapter()`.

Methods that return a QuerySet return it lazily, with the column names their
docstring gives: the memory embeds them in its own SQL (the map rebuild, the
wall, briefs, search), so a read stays a fixed number of statements however
much the host holds. Any QuerySet will do, `.none()` included (a host with no
teams answers `graph_team_links` with one): `queryset_sql` compiles it. The
reference host's adapter is `practice/memory_adapter.py`; the second host in
`tests/second_host/` is a worked example for a product shaped differently, the
third (`tests/third_host/`) the least a product must give.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Protocol

from django.apps import apps
from django.core.exceptions import ImproperlyConfigured
from django.db import DEFAULT_DB_ALIAS
from django.db.models import Expression, Model, QuerySet
from django.utils.module_loading import import_string

from graph_memory import conf

# Kinds of record a summary slice is made of (besides the header and the parties).
RECORD_KINDS = ("deadline", "invoice", "note", "draft", "document")


class Viewer(Protocol):
    """Who is asking: the host's user as the memory receives it, and what it reads of every viewer.

    `request.user` (Django's AnonymousUser too), the user behind an API or MCP token, the
    user a command names; any Django user model has these. Which firm a viewer belongs to and
    whether they are its admin, the adapter answers (`viewer_firm_id`, `viewer_is_firm_admin`)
    from whatever fields the host has; Django admin's pages also ask `is_staff` and
    `is_superuser`, as Django admin does. Read-only properties, so a model field, a class
    attribute or a property all fit.
    """

    @property
    def pk(self) -> int | None:  # the memory keeps viewer ids in bigint columns; None: anonymous
        ...

    @property
    def is_authenticated(self) -> bool: ...

    @property
    def is_active(self) -> bool: ...


@dataclass(frozen=True)
class GuardianPermissions:
    """django-guardian direct foreign-key permission models on the case model, and the codename that opens a case."""

    user_model: type[Model]  # a UserObjectPermissionBase subclass whose content_object is the case
    group_model: type[Model] | None  # a GroupObjectPermissionBase subclass, or None if the host grants no groups
    codename: str  # e.g. "view_case"


@dataclass(frozen=True)
class Party:
    """A client or counterparty of one case. `key` is stable within the firm (it names the source id)."""

    key: str
    name: str
    role: str  # "client" or "counterparty"


@dataclass(frozen=True)
class CaseHeader:
    """The header of one case, as a summary slice opens with it."""

    case_id: int
    firm_id: int
    reference: str  # the case's number / reference as people write it, e.g. "2026-014"
    title: str
    status: str  # human-readable, e.g. "Open"
    opened: date | None
    description: str  # may be cut to the limit asked for
    client: Party | None
    counterparties: tuple[Party, ...] = ()


@dataclass(frozen=True)
class Record:
    """One record filed on a case, neutral: what a summary slice item is made of.

    `key` is stable within the case and kind (the source id is `<kind>:<key>`,
    `document:<key>#p<page>` for document pages). `fields` carries the
    record's own fields: a deadline {"title", "due": date, "done": bool}; an
    invoice {"number", "issued": date, "amount": Decimal, "currency",
    "status": "draft" | "sent" | "paid" | "void" | another lower-case word}.
    A document has `pages` (its first pages' text, in order); other kinds
    have `text`.
    """

    kind: str  # one of RECORD_KINDS
    key: str
    title: str = ""
    date: date | datetime | None = None
    text: str = ""
    pages: tuple[str, ...] = ()
    fields: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class DocumentRef:
    """One fully processed document of a case, for its routing index: `key` as in `Record.key`."""

    key: str
    title: str
    page_count: int


@dataclass(frozen=True)
class NoteOrigin:
    """Where an assistant-filed note came from: the conversation and the messages the lawyer chose to keep."""

    conversation_id: str = ""
    message_ids: tuple[str, ...] = ()


class NotSupported(Exception):
    """The host's adapter does not offer this ability (an optional method left at its default).

    The memory then answers a documented `not_supported` error and does not
    offer the matching assistant tool; it never falls back to another way.
    """


@dataclass(frozen=True)
class SliceLimits:
    """How much of a case the slice may read: records per kind, characters per text, pages per document."""

    per_kind: Mapping[str, int]  # kind -> at most this many records
    counterparties: int
    text_chars: int  # cut every text (description, note, draft, page) to at most this many characters
    pages_per_document: int


@dataclass(frozen=True)
class Watch:
    """A host model whose changes matter to the memory, and how to find the cases a row belongs to.

    `case_ids(instance)` returns the ids of the cases concerned (a list, or a
    QuerySet of cases, inlined as a subquery). Without `fields`, every save
    and delete counts. With `fields`, their values as loaded are remembered:
    when `only_when_changed`, a save that changed none of them counts for
    nothing; `relevant(values)` is asked of the values before and after, and
    the change counts only if either is relevant (e.g. only processed
    documents). A delete counts only when the row itself is deleted, not when
    its case goes (the memory's rows of that case go with it).
    """

    model: type[Model]
    case_ids: Callable[[Any], Iterable[int] | QuerySet[Any]]
    fields: tuple[str, ...] | None = None
    only_when_changed: bool = True
    relevant: Callable[[Mapping[str, Any]], bool] | None = None
    on_create: bool = True


@dataclass(frozen=True)
class ManyToManyWatch:
    """A many-to-many between the case model and another model (`through` is its link model).

    `add()` bulk-inserts link rows without post_save, so these are watched
    through m2m_changed (sender `through`), from either side.
    """

    through: type[Model]
    stale: bool = True  # whether a link added flags the case stale (a team change does not change a summary)


@dataclass(frozen=True)
class Changes:
    """Which host changes touch the memory.

    `stale`: saves and deletes that flag a case's summary as out of date.
    `graph`: saves and deletes that re-sync a case's part of the map.
    `m2m`: many-to-many links (team, counterparties) that do both.
    `labels`: model -> node kind (or kinds: one party model may stand for clients and
    counterparties both) whose rows, when saved, refresh that node's label (the row's pk
    is the node's `ref_id`); `label_fields` limits which fields count.
    `documents`: saves and deletes that mark a document's routing index stale; for these,
    `case_ids(instance)` returns `(case_id, document_key)` pairs, not case ids.
    """

    stale: Sequence[Watch] = ()
    graph: Sequence[Watch] = ()
    m2m: Sequence[ManyToManyWatch] = ()
    labels: Mapping[type[Model], str | tuple[str, ...]] = field(default_factory=dict)
    label_fields: Mapping[type[Model], tuple[str, ...]] = field(default_factory=dict)
    documents: Sequence[Watch] = ()


class MemoryAdapter:
    """What the memory needs from the host. Subclass it and name the subclass in GRAPH_MEMORY["ADAPTER"].

    Methods with a body here have a default that fits hosts whose users carry
    `firm_id` and `is_firm_admin`; the rest must be given by the host.
    Every method answers for the host's records as they are now; none is ever
    asked to decide visibility — `graph_memory.wall.access` does, from
    `viewer_firm_id`, `viewer_is_firm_admin` and `guardian_permissions` /
    `member_case_ids`.
    """

    # The case model's foreign key to the firm model (a column `<name>_id`).
    case_firm_field = "firm"
    # The case model's foreign key to the user who owns the case, if it has one: the access ledger
    # (graph_memory/ledger/) then says a user's grant stands because they own the case, not as team.
    case_owner_field: str | None = None
    # The case model's foreign key to the client, if it has one: memory consent (graph_memory/consent/)
    # can then exclude a client, every case of it present and future. Without it, cases only.
    case_client_field: str | None = None
    # Case fields Django admin's search matches a summary's case by.
    case_admin_search_fields: tuple[str, ...] = ()

    # --- who is asking --------------------------------------------------------------------------

    def viewer_firm_id(self, viewer: Viewer) -> int | None:
        """The firm an authenticated, active viewer belongs to (None: they see nothing)."""
        return getattr(viewer, "firm_id", None)

    def viewer_is_firm_admin(self, viewer: Viewer) -> bool:
        """Whether the viewer is an admin of their firm (they may open every case of it)."""
        return bool(getattr(viewer, "is_firm_admin", False))

    # --- the wall's inputs ----------------------------------------------------------------------

    def guardian_permissions(self) -> GuardianPermissions | None:
        """The guardian direct-FK permission models that open a case, or None if the host uses `member_case_ids`."""
        return None

    def member_case_ids(self, viewer: Viewer) -> QuerySet[Any]:
        """For hosts without guardian: a QuerySet of the ids (one column) of cases the viewer owns or is on.

        Never asked when `guardian_permissions()` returns models. The firm
        filter and firm admins are applied by the access module.
        """
        raise NotImplementedError("give guardian_permissions() or member_case_ids()")

    # --- the case: display and search -----------------------------------------------------------

    def case_reference(self) -> Expression | Any:
        """An expression over the case model giving its reference ("2026-014"), e.g. F("number")."""
        raise NotImplementedError

    def case_title(self) -> Expression | Any:
        """An expression over the case model giving its title."""
        raise NotImplementedError

    def case_label(self, case: Any) -> str:
        """One case instance as people read it in admin: reference and title ("2026-014 Northwind / Castell
        acquisition"). Default: the case model's `str()`; override if that is not what your people call it."""
        return str(case)

    def case_activity(self) -> Expression | Any:
        """An expression over the case model: when its header last changed (a datetime), e.g. F("updated_at")."""
        raise NotImplementedError

    def case_id_by_reference(self, *, firm_id: int, reference: str) -> int | None:
        """The case of this firm with this reference, for commands (None if there is none)."""
        model = case_model()
        return (
            model.objects.filter(**{case_firm_attname(): firm_id})
            .annotate(_reference=self.case_reference())
            .filter(_reference=reference)
            .values_list("pk", flat=True)
            .first()
        )

    # --- briefs: header facts of many cases in one query ----------------------------------------

    def case_header_annotations(self) -> dict[str, Any]:
        """Expressions over the case model for a brief's header, keyed: "reference", "title",
        "status" (human-readable), "opened" (a date), "description", "client_name",
        "counterparty_names" (an ArraySubquery of names, in a stable order)."""
        raise NotImplementedError

    def live_fact_annotations(self) -> dict[str, Any]:
        """Expressions over the case model, each an array of short sentences read from the live
        records at request time (e.g. open deadlines with their due dates, unpaid invoices), so a
        brief never shows last night's state of a field. Embedded in the brief's one query; keep
        each bounded (a slice inside the subquery). Default: none."""
        return {}

    # --- summary slice --------------------------------------------------------------------------

    def case_header(self, *, case_id: int, limits: SliceLimits) -> CaseHeader | None:
        """The header of one case (None if it does not exist), with at most `limits.counterparties` counterparties."""
        raise NotImplementedError

    def case_records(self, *, case_id: int, limits: SliceLimits) -> dict[str, list[Record]]:
        """The case's own records by kind (RECORD_KINDS), at most `limits.per_kind[kind]` each, in this order:
        deadlines open first (soonest first) then done (most recent first); invoices, notes, drafts
        and documents latest first. Documents only once fully processed, each with at most
        `limits.pages_per_document` pages. Texts cut to `limits.text_chars`. Never reads another case."""
        raise NotImplementedError

    def cases_records(self, *, case_ids: Sequence[int], limits: SliceLimits) -> dict[int, dict[str, list[Record]]]:
        """`case_records` of many cases of one firm at once, by case id (the write-back guard reads the
        filer's cases a note is compared with). The default asks `case_records` case by case; a host
        with many cases should answer in a fixed number of queries (one per kind)."""
        return {case_id: self.case_records(case_id=case_id, limits=limits) for case_id in case_ids}

    # --- the lint pass (graph_memory/lint/): the live records behind stored summaries, in bulk ----

    def lint_records(self, *, firm_id: int, cited: Mapping[str, Collection[tuple[int, str]]]) -> list[tuple[int, Record]]:
        """The records of this firm that stored summaries cite, as they are now.

        `cited` maps a kind to the (case_id, key) pairs asked: RECORD_KINDS; "client" and
        "counterparty" (a case's parties by `Party.key`: `Record(kind, key, title=name,
        fields={"name", "role"})`); "header" (key "header": `Record("header", "header",
        title=..., text=description, fields={"reference", "title", "status", "opened"})`, the
        values `case_header` gives). Returns (case_id, Record) for each pair that still exists,
        fields and texts as `case_records` gives them but uncut, with every page of a document
        (a document no longer processed counts as gone). Never answers for another firm's case.
        The default asks `case_header` and `case_records` case by case; a host with many cases
        should answer in a fixed number of queries (one per kind).
        """
        case_ids = {case_id for pairs in cited.values() for case_id, _ in pairs}
        ours = firm_cases(firm_id).filter(pk__in=case_ids)
        limits = SliceLimits(
            per_kind=dict.fromkeys(RECORD_KINDS, 1_000_000), counterparties=1_000_000,
            text_chars=1_000_000_000, pages_per_document=100_000,
        )  # fmt: skip
        wanted = {(kind, case_id, key) for kind, pairs in cited.items() for case_id, key in pairs}
        found: list[tuple[int, Record]] = []
        for case_id in ours.order_by("pk").values_list("pk", flat=True):
            header = self.case_header(case_id=case_id, limits=limits)
            if header is None:
                continue
            fields = {"reference": header.reference, "title": header.title, "status": header.status,
                      "opened": header.opened}  # fmt: skip
            records = [Record("header", "header", title=header.title, text=header.description, fields=fields)]
            parties = ([header.client] if header.client else []) + list(header.counterparties)
            records += [Record(p.role, p.key, title=p.name, fields={"name": p.name, "role": p.role}) for p in parties]
            records += [r for rs in self.case_records(case_id=case_id, limits=limits).values() for r in rs]
            found += [(case_id, r) for r in records if (r.kind, case_id, r.key) in wanted]
        return found

    def case_record_count(self) -> Expression | Any | None:
        """An expression over the case model: how many records (RECORD_KINDS) the case holds, for the
        lint's weak-summary check (None, the default: the host does not say; that check is skipped)."""
        return None

    # --- long documents: routing indexes and answers (graph_memory/documents/) --------------------

    def case_documents(self, *, case_id: int) -> list[DocumentRef]:
        """The case's fully processed documents, latest first (none: the host has no long documents).
        Never reads another case."""
        return []

    def document_pages(self, *, case_id: int, key: str, first: int = 1, last: int | None = None) -> list[str]:
        """The full text of pages `first`..`last` (1-based, inclusive; `last` None: to the end) of the
        case's processed document `key`, in order; [] if the case has no such processed document.
        Never reads another case's document."""
        return []

    # --- optional: one record in full, and notes the assistant files (notes.py, sources.py) -------

    def case_record(self, *, case_id: int, kind: str, key: str, page: int | None = None) -> Record | None:
        """One record of this case as it is now, uncut, for the source endpoint (None if the case has no such record).

        `kind` is one of RECORD_KINDS and `key` the record's key as `case_records` gives it.
        A document is asked for one page (`page`, from 1): return it alone in `pages`, with
        `fields["page_count"]`, and None for a page it does not have or a document not yet
        processed. Notes carry `fields` {"author": a display name or "", "origin": a
        NoteOrigin-like mapping or None}; a note with an origin was filed by the assistant.
        Never reads another case's records. Optional: the default raises NotSupported.
        """
        raise NotSupported("case_record")

    def file_note(self, *, case_id: int, author: Viewer, title: str, text: str, origin: NoteOrigin) -> Record:
        """Store a new, assistant-filed working note on this case, exactly as given; return it as a Record.

        The one write the memory ever asks of the host. `author` is the viewer the assistant
        acts for (the memory has checked they may open the case); `text` and `title` are
        stored verbatim. The note must then appear in `case_records()["note"]` (with its
        title) like any working note, and in `case_record(kind="note", ...)` with its origin.
        The memory never asks to change or delete it (a correction is a new note) and flags
        the case stale itself, in the same transaction. Optional: the default raises
        NotSupported, and the memory then offers no note filing at all.
        """
        raise NotSupported("file_note")

    def case_member_ids(self, *, case_id: int) -> QuerySet[Any]:
        """For hosts without guardian: a QuerySet of the ids (one column) of the users who own or are on this
        case, the reverse of `member_case_ids` (firm admins need not be listed). The write-back guard asks it
        who may open the case a note is filed into (`access.case_audience`). Optional: without it, the guard
        takes every other case the filer may open as one whose audience differs."""
        raise NotSupported("case_member_ids")

    def supports(self, method: str) -> bool:
        """Whether this adapter gives the optional method `method` ("case_record", "file_note", "case_member_ids")."""
        return getattr(type(self), method) is not getattr(MemoryAdapter, method)

    # --- the connection map -----------------------------------------------------------------------

    def graph_case_headers(self, *, firm_id: int | None = None, case_id: int | None = None) -> QuerySet[Any]:
        """Columns case_ref, firm_ref, case_label, owner_ref, owner_label, client_ref, client_label: one row a case."""
        raise NotImplementedError

    def graph_team_links(self, *, firm_id: int | None = None, case_id: int | None = None) -> QuerySet[Any]:
        """Columns case_ref, user_ref, user_label: one row per team member (the owner may appear; it is ignored)."""
        raise NotImplementedError

    def graph_counterparty_links(self, *, firm_id: int | None = None, case_id: int | None = None) -> QuerySet[Any]:
        """Columns case_ref, party_ref, party_label: one row per counterparty of a case."""
        raise NotImplementedError

    def graph_label(self, *, kind: str, ref_id: int) -> str | None:
        """The current label of the host row behind a node of this kind (None if it is gone)."""
        raise NotImplementedError

    def graph_linked_case_ids(self, instance: Any) -> list[int]:
        """The cases a lawyer is on the team of, or a counterparty is against (before an m2m clear)."""
        raise NotImplementedError

    # --- what changes matter --------------------------------------------------------------------

    def changes(self) -> Changes:
        """The host models and fields whose changes flag summaries stale or re-sync the map."""
        raise NotImplementedError

    # --- firms, for commands and admin ------------------------------------------------------------

    firm_slug_field = "slug"

    def firm_field_of(self, model: type[Model]) -> str | None:
        """The foreign key from `model` to the firm model, for firm-scoped admin choices
        (None: the model belongs to no firm). Default: the case model's `case_firm_field`,
        else a field named "firm" if the model has one. Override for your user model and any
        host model whose firm field is named otherwise, or a firm admin's dropdowns would
        list another firm's rows."""
        if model._meta.label_lower == conf.case_model_label().lower():
            return self.case_firm_field
        names = {f.name for f in model._meta.get_fields()}
        return "firm" if "firm" in names else None

    def firm_timezone(self, firm: Any) -> str:
        """The firm's IANA time zone name: admin shows every time in it, labelled, and the health page's
        nights are its nights ("" or unknown: UTC)."""
        return str(getattr(firm, "timezone", "") or "")

    def firm_by_slug(self, slug: str) -> Any | None:
        """The firm this command-line name stands for (None if none)."""
        return firm_model().objects.filter(**{self.firm_slug_field: slug}).first()

    def firm_slug(self, firm: Any) -> str:
        return str(getattr(firm, self.firm_slug_field))

    def record_admin_urls(self, *, case_id: int, source_ids: Sequence[str]) -> dict[str, str]:
        """For admin's summary pages: the host admin page of each record behind these source ids of one
        case, for those that still exist and have one. A bounded number of queries. Default: none."""
        return {}


def queryset_sql(queryset: QuerySet[Any]) -> tuple[str, tuple[Any, ...]]:
    """The SQL and parameters of a QuerySet the adapter gave, to embed in one of the memory's statements.

    A QuerySet that can match nothing (`.none()`, `pk__in=[]`) compiles to a statement with the same
    columns that selects no row, where `query.sql_with_params()` would raise EmptyResultSet.
    """
    sql, params = queryset.query.get_compiler(DEFAULT_DB_ALIAS, elide_empty=False).as_sql()
    return sql, tuple(params)


def case_model() -> type[Model]:
    """The host's case model (settings.GRAPH_MEMORY_CASE_MODEL)."""
    return apps.get_model(conf.case_model_label(), require_ready=False)


def firm_model() -> type[Model]:
    """The host's firm model (settings.GRAPH_MEMORY_FIRM_MODEL)."""
    return apps.get_model(conf.firm_model_label(), require_ready=False)


def case_firm_attname() -> str:
    """The case model's firm foreign key as the ORM names its id (e.g. "firm_id"): the one way to say it."""
    return f"{get_adapter().case_firm_field}_id"


def case_firm_column() -> str:
    """The case table's firm column, unquoted, for raw SQL."""
    return case_model()._meta.get_field(get_adapter().case_firm_field).column


def firm_cases(firm_id: Any) -> QuerySet[Any]:
    """The cases of one firm (lazy)."""
    return case_model().objects.filter(**{case_firm_attname(): firm_id})


@functools.cache
def _load(path: str) -> MemoryAdapter:
    # Whatever the host's module raises on import (a typo, a model of an app not installed) is named,
    # with its own type and message, by the E033 check instead of a traceback out of `manage.py check`.
    try:
        cls = import_string(path)
    except Exception as exc:
        raise ImproperlyConfigured(
            f"GRAPH_MEMORY['ADAPTER'] = {path!r} cannot be imported: {type(exc).__name__}: {exc}"
        ) from exc
    if not (isinstance(cls, type) and issubclass(cls, MemoryAdapter)):
        raise ImproperlyConfigured(f"GRAPH_MEMORY['ADAPTER'] = {path!r} is not a MemoryAdapter subclass")
    try:
        return cls()
    except Exception as exc:
        raise ImproperlyConfigured(f"GRAPH_MEMORY['ADAPTER'] = {path!r} raised {type(exc).__name__}: {exc}") from exc


def get_adapter() -> MemoryAdapter:
    """The host's adapter (one instance per process and setting)."""
    path = conf.get("ADAPTER")
    if not path:
        raise ImproperlyConfigured(
            'GRAPH_MEMORY["ADAPTER"] is not set: name your MemoryAdapter subclass, e.g. "myproduct.memory_adapter.Adapter"'
        )
    return _load(path)

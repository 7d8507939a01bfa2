"""Firm import, format version 1 (../shared/spec/firm-import.md).

The whole document is validated before anything is written; any error names
the JSON path of the problem and nothing is written. Writing happens in one
transaction and is keyed, so loading the same file twice changes nothing the
second time.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import zoneinfo
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from django.db import transaction
from django.utils.dateparse import parse_date, parse_datetime

from accounts.models import Firm, User
from practice.import_json import MAX_DEPTH, deep_path, json_object, shape_errors
from practice.models import (
    Case,
    CaseCounterparty,
    CaseTeamMember,
    Client,
    Counterparty,
    Deadline,
    Document,
    Draft,
    Invoice,
    Note,
)

SLUG_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
CURRENCY_RE = re.compile(r"^[A-Z]{3}$")
EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+$")
USERNAME_RE = re.compile(r"^[\w.@+-]{1,150}$")
MAX_AMOUNT = Decimal("99999999999999.99")


class ImportFailed(Exception):
    """The file was rejected; `errors` lists every problem as "path: message"."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("\n".join(errors))
        self.errors = errors


@dataclass
class ImportCounts:
    created: Counter[str] = field(default_factory=Counter)
    updated: Counter[str] = field(default_factory=Counter)
    unchanged: Counter[str] = field(default_factory=Counter)

    @property
    def changed(self) -> int:
        return sum(self.created.values()) + sum(self.updated.values())


class _Validator:
    """Walks the document once, collecting errors with their JSON paths."""

    def __init__(self) -> None:
        self.errors: list[str] = []

    def error(self, path: str, message: str) -> None:
        self.errors.append(f"{path}: {message}")

    def obj(self, value: Any, path: str, required: set[str], optional: frozenset[str] = frozenset()) -> bool:
        if not isinstance(value, dict):
            self.error(path, "must be an object")
            return False
        for name in sorted(set(value) - required - optional):
            self.error(f"{path}.{name}" if path else name, "unknown field")
        for name in sorted(required - set(value)):
            self.error(f"{path}.{name}" if path else name, "is required")
        return True

    def array(self, value: Any, path: str) -> list[Any]:
        if not isinstance(value, list):
            self.error(path, "must be an array")
            return []
        return value

    def text(self, value: Any, path: str, *, max_length: int, allow_empty: bool = False) -> str | None:
        if not isinstance(value, str):
            self.error(path, "must be a string")
            return None
        if not allow_empty and not value.strip():
            self.error(path, "must not be empty")
            return None
        if len(value) > max_length:
            self.error(path, f"is longer than {max_length} characters")
            return None
        return value

    def choice(self, value: Any, path: str, choices: list[str]) -> str | None:
        if value not in choices:
            self.error(path, f"must be one of {', '.join(choices)}, not {json.dumps(value)}")
            return None
        return value

    def date(self, value: Any, path: str) -> dt.date | None:
        try:
            parsed = parse_date(value) if isinstance(value, str) and len(value) == 10 else None
        except ValueError:
            parsed = None
        if parsed is None:
            self.error(path, f"must be a date YYYY-MM-DD, not {json.dumps(value)}")
        return parsed

    def timestamp(self, value: Any, path: str) -> dt.datetime | None:
        try:
            parsed = parse_datetime(value) if isinstance(value, str) else None
        except ValueError:
            parsed = None
        if parsed is None or parsed.tzinfo is None:
            self.error(path, f"must be an ISO 8601 timestamp with a zone, not {json.dumps(value)}")
            return None
        return parsed

    def unique_keys(self, items: list[Any], path: str, key: str = "key") -> None:
        seen: set[str] = set()
        for i, item in enumerate(items):
            # A key that is no string is reported by the field's own check.
            if isinstance(item, dict) and isinstance(item.get(key), str):
                if item[key] in seen:
                    self.error(f"{path}[{i}].{key}", f"duplicate {key} {json.dumps(item[key])}")
                seen.add(item[key])

    def reference(self, value: Any, path: str, known: set[str], what: str) -> None:
        """A key naming another record: a string among `known` (a list or object is named as such, never hashed)."""
        if not isinstance(value, str):
            self.error(path, f"must be a string naming a {what}, not {_kind_of(value)}")
        elif value not in known:
            self.error(path, f"unknown {what} {json.dumps(value)}")


def _kind_of(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, dict):
        return "an object"
    return "an array" if isinstance(value, list) else "a number"


def parse_firm_document(raw: str | bytes) -> dict[str, Any]:
    """Parse and validate a whole import document; raise `ImportFailed` listing every problem."""
    try:
        data = json.loads(raw, object_pairs_hook=json_object)
    except json.JSONDecodeError as exc:
        raise ImportFailed([f"(document): not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"]) from None
    except UnicodeDecodeError as exc:
        raise ImportFailed([f"(document): not UTF-8 text: {exc.reason}"]) from None
    except ValueError as exc:  # e.g. an integer past Python's 4,300-digit limit
        raise ImportFailed([f"(document): not valid JSON: {exc}"]) from None
    except RecursionError:
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
        raise ImportFailed([f"{deep_path(text)}: nested deeper than {MAX_DEPTH} levels"]) from None
    problems = shape_errors(data)
    if problems:
        # Nothing else is checked: every later message could quote what cannot be printed or stored.
        raise ImportFailed(problems)
    v = _Validator()
    if not v.obj(data, "", {"format", "firm", "users", "clients", "counterparties", "cases"}):
        raise ImportFailed(["(document): must be a JSON object"])
    # type(), not ==: JSON true is no format number, though Python's True == 1 (and 1.0 == 1).
    if "format" in data and (type(data["format"]) is not int or data["format"] != 1):
        v.error("format", f"unsupported format {json.dumps(data['format'])}; this importer reads format 1")
    _validate_firm(v, data.get("firm"))
    existing_users = _validate_users(v, data.get("users", []), data.get("firm"))
    for list_name in ("clients", "counterparties"):
        items = v.array(data.get(list_name, []), list_name)
        v.unique_keys(items, list_name)
        for i, item in enumerate(items):
            p = f"{list_name}[{i}]"
            if v.obj(item, p, {"key", "name"}):
                v.text(item.get("key"), f"{p}.key", max_length=100)
                v.text(item.get("name"), f"{p}.name", max_length=300)
    _validate_cases(v, data, existing_users)
    if v.errors:
        raise ImportFailed(v.errors)
    return data


def _validate_firm(v: _Validator, firm: Any) -> None:
    if firm is None or not v.obj(firm, "firm", {"slug", "name"}, frozenset({"timezone"})):
        return
    slug = v.text(firm.get("slug"), "firm.slug", max_length=64)
    if slug is not None and not SLUG_RE.match(slug):
        v.error("firm.slug", "must be lowercase letters, digits and hyphens")
    v.text(firm.get("name"), "firm.name", max_length=200)
    if "timezone" in firm:
        v.reference(firm["timezone"], "firm.timezone", zoneinfo.available_timezones(), "time zone")


def _validate_users(v: _Validator, users: Any, firm: Any) -> set[str]:
    users = v.array(users, "users")
    v.unique_keys(users, "users", key="username")
    slug = firm.get("slug") if isinstance(firm, dict) and isinstance(firm.get("slug"), str) else None
    names = [u.get("username") for u in users if isinstance(u, dict) and isinstance(u.get("username"), str)]
    foreign = dict(
        User.objects.filter(username__in=names).exclude(firm__slug=slug).values_list("username", "firm__slug")
    )
    for i, user in enumerate(users):
        p = f"users[{i}]"
        if not v.obj(user, p, {"username", "name", "role"}, frozenset({"email"})):
            continue
        username = v.text(user.get("username"), f"{p}.username", max_length=150)
        if username is not None and not USERNAME_RE.match(username):
            v.error(f"{p}.username", "may hold only letters, digits and @.+-_")
        elif username in foreign:
            v.error(f"{p}.username", f"{json.dumps(username)} already belongs to another firm")
        v.text(user.get("name"), f"{p}.name", max_length=200)
        v.choice(user.get("role"), f"{p}.role", ["lawyer", "admin"])
        if "email" in user:
            email = v.text(user["email"], f"{p}.email", max_length=254, allow_empty=True)
            if email and not EMAIL_RE.match(email):
                v.error(f"{p}.email", f"not an email address: {json.dumps(email)}")
    # Users already stored for this firm may be referenced without being listed again.
    stored = set(User.objects.filter(firm__slug=slug).values_list("username", flat=True)) if slug else set()
    return stored | {n for n in names if n not in foreign}


def _keys(data: dict[str, Any], list_name: str) -> set[Any]:
    items = data.get(list_name)
    return {i["key"] for i in items if isinstance(i, dict) and isinstance(i.get("key"), str)} if isinstance(items, list) else set()


CASE_FIELDS = {"key", "title", "status", "opened", "client", "owner"}
CASE_OPTIONAL = frozenset({"description", "counterparties", "team", "documents", "drafts", "deadlines", "invoices", "notes"})


def _validate_cases(v: _Validator, data: dict[str, Any], users: set[str]) -> None:
    clients, counterparties = _keys(data, "clients"), _keys(data, "counterparties")
    cases = v.array(data.get("cases", []), "cases")
    v.unique_keys(cases, "cases")
    for i, case in enumerate(cases):
        p = f"cases[{i}]"
        if not v.obj(case, p, CASE_FIELDS, CASE_OPTIONAL):
            continue
        v.text(case.get("key"), f"{p}.key", max_length=100)
        v.text(case.get("title"), f"{p}.title", max_length=300)
        v.choice(case.get("status"), f"{p}.status", [c.value for c in Case.Status])
        v.date(case.get("opened"), f"{p}.opened")
        if "description" in case:
            v.text(case["description"], f"{p}.description", max_length=20000, allow_empty=True)
        if "client" in case:
            v.reference(case["client"], f"{p}.client", clients, "client")
        for j, cp in enumerate(v.array(case.get("counterparties", []), f"{p}.counterparties")):
            v.reference(cp, f"{p}.counterparties[{j}]", counterparties, "counterparty")
        if "owner" in case:
            v.reference(case["owner"], f"{p}.owner", users, "user")
        for j, member in enumerate(v.array(case.get("team", []), f"{p}.team")):
            v.reference(member, f"{p}.team[{j}]", users, "user")
        _validate_records(v, case, p, users)


def _validate_records(v: _Validator, case: dict[str, Any], p: str, users: set[str]) -> None:
    for list_name in ("documents", "drafts", "deadlines", "invoices", "notes"):
        v.unique_keys(v.array(case.get(list_name, []), f"{p}.{list_name}"), f"{p}.{list_name}")
    for j, doc in enumerate(v.array(case.get("documents", []), f"{p}.documents")):
        q = f"{p}.documents[{j}]"
        if v.obj(doc, q, {"key", "title", "status", "created"}, frozenset({"pages"})):
            v.text(doc.get("key"), f"{q}.key", max_length=100)
            v.text(doc.get("title"), f"{q}.title", max_length=300)
            v.choice(doc.get("status"), f"{q}.status", [c.value for c in Document.Status])
            v.timestamp(doc.get("created"), f"{q}.created")
            for k, page in enumerate(v.array(doc.get("pages", []), f"{q}.pages")):
                v.text(page, f"{q}.pages[{k}]", max_length=200_000, allow_empty=True)
    for j, draft in enumerate(v.array(case.get("drafts", []), f"{p}.drafts")):
        q = f"{p}.drafts[{j}]"
        if v.obj(draft, q, {"key", "title", "created"}, frozenset({"text"})):
            v.text(draft.get("key"), f"{q}.key", max_length=100)
            v.text(draft.get("title"), f"{q}.title", max_length=300)
            v.timestamp(draft.get("created"), f"{q}.created")
            if "text" in draft:
                v.text(draft["text"], f"{q}.text", max_length=200_000, allow_empty=True)
    for j, deadline in enumerate(v.array(case.get("deadlines", []), f"{p}.deadlines")):
        q = f"{p}.deadlines[{j}]"
        if v.obj(deadline, q, {"key", "title", "due"}, frozenset({"done"})):
            v.text(deadline.get("key"), f"{q}.key", max_length=100)
            v.text(deadline.get("title"), f"{q}.title", max_length=300)
            v.date(deadline.get("due"), f"{q}.due")
            if "done" in deadline and not isinstance(deadline["done"], bool):
                v.error(f"{q}.done", "must be true or false")
    for j, invoice in enumerate(v.array(case.get("invoices", []), f"{p}.invoices")):
        q = f"{p}.invoices[{j}]"
        if v.obj(invoice, q, {"key", "number", "issued", "amount", "currency"}, frozenset({"status"})):
            v.text(invoice.get("key"), f"{q}.key", max_length=100)
            v.text(invoice.get("number"), f"{q}.number", max_length=100)
            v.date(invoice.get("issued"), f"{q}.issued")
            _validate_amount(v, invoice.get("amount"), f"{q}.amount")
            if not (isinstance(invoice.get("currency"), str) and CURRENCY_RE.match(invoice["currency"])):
                v.error(f"{q}.currency", f"must be an ISO 4217 code such as USD, not {json.dumps(invoice.get('currency'))}")
            if "status" in invoice:
                v.choice(invoice["status"], f"{q}.status", [c.value for c in Invoice.Status])
    for j, note in enumerate(v.array(case.get("notes", []), f"{p}.notes")):
        q = f"{p}.notes[{j}]"
        if v.obj(note, q, {"key", "created", "text"}, frozenset({"author"})):
            v.text(note.get("key"), f"{q}.key", max_length=100)
            v.timestamp(note.get("created"), f"{q}.created")
            v.text(note.get("text"), f"{q}.text", max_length=200_000)
            if "author" in note:
                v.reference(note["author"], f"{q}.author", users, "user")


def _validate_amount(v: _Validator, value: Any, path: str) -> None:
    if not isinstance(value, str):
        v.error(path, "must be a decimal string such as \"12500.00\"")
        return
    try:
        amount = Decimal(value)
    except InvalidOperation:
        v.error(path, f"not a decimal number: {json.dumps(value)}")
        return
    if not amount.is_finite() or amount.as_tuple().exponent < -2 or abs(amount) > MAX_AMOUNT:  # type: ignore[operator]
        v.error(path, f"must be a finite amount with at most 2 decimal places, not {json.dumps(value)}")


def import_firm(raw: str | bytes) -> ImportCounts:
    """Validate then load one firm document; all or nothing. Raises `ImportFailed`."""
    data = parse_firm_document(raw)
    with transaction.atomic():
        return _Writer(data).write()


class _Writer:
    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.counts = ImportCounts()

    def upsert(self, model: type[Any], lookup: dict[str, Any], values: dict[str, Any]) -> Any:
        """Create or update one row, touching the database only when something differs."""
        label = model._meta.verbose_name_plural
        obj = model.objects.filter(**lookup).first()
        if obj is None:
            self.counts.created[label] += 1
            return model.objects.create(**lookup, **values)
        changed = [name for name, value in values.items() if getattr(obj, name) != value]
        if changed:
            for name in changed:
                setattr(obj, name, values[name])
            obj.save()
            self.counts.updated[label] += 1
        else:
            self.counts.unchanged[label] += 1
        return obj

    def write(self) -> ImportCounts:
        f = self.data["firm"]
        firm = self.upsert(Firm, {"slug": f["slug"]}, {"name": f["name"], "timezone": f.get("timezone", "UTC")})
        users = {u.username: u for u in User.objects.filter(firm=firm)}
        for u in self.data["users"]:
            is_admin = u["role"] == "admin"
            users[u["username"]] = self.upsert(
                User,
                {"username": u["username"]},
                {"firm": firm, "name": u["name"], "email": u.get("email", ""), "role": u["role"], "is_staff": is_admin},
            )
        clients = {c["key"]: self.upsert(Client, {"firm": firm, "key": c["key"]}, {"name": c["name"]}) for c in self.data["clients"]}
        counterparties = {
            c["key"]: self.upsert(Counterparty, {"firm": firm, "key": c["key"]}, {"name": c["name"]})
            for c in self.data["counterparties"]
        }
        for c in self.data["cases"]:
            case = self.upsert(
                Case,
                {"firm": firm, "key": c["key"]},
                {
                    "title": c["title"],
                    "status": c["status"],
                    "opened": parse_date(c["opened"]),
                    "description": c.get("description", ""),
                    "client": clients[c["client"]],
                    "owner": users[c["owner"]],
                },
            )
            self.sync_links(case, CaseCounterparty, "counterparty_id", {counterparties[k].pk for k in c.get("counterparties", [])})
            self.sync_links(case, CaseTeamMember, "user_id", {users[k].pk for k in c.get("team", [])})
            self.write_records(case, c, users)
        return self.counts

    def sync_links(self, case: Case, model: type[Any], column: str, wanted: set[int]) -> None:
        label = model._meta.verbose_name_plural
        current = set(model.objects.filter(case=case).values_list(column, flat=True))
        # Deleting one by one (not a bulk delete) so post_delete receivers fire.
        for link in model.objects.filter(case=case).exclude(**{f"{column}__in": wanted}):
            link.delete()
            self.counts.updated[label] += 1
        for pk in sorted(wanted - current):
            model.objects.create(case=case, firm_id=case.firm_id, **{column: pk})
            self.counts.created[label] += 1

    def write_records(self, case: Case, c: dict[str, Any], users: dict[str, User]) -> None:
        base = {"firm_id": case.firm_id}
        for d in c.get("documents", []):
            self.upsert(Document, {"case": case, "key": d["key"]}, {
                **base, "title": d["title"], "status": d["status"],
                "created": parse_datetime(d["created"]), "pages": d.get("pages", []),
            })
        for d in c.get("drafts", []):
            self.upsert(Draft, {"case": case, "key": d["key"]}, {
                **base, "title": d["title"], "created": parse_datetime(d["created"]), "text": d.get("text", ""),
            })
        for d in c.get("deadlines", []):
            self.upsert(Deadline, {"case": case, "key": d["key"]}, {
                **base, "title": d["title"], "due": parse_date(d["due"]), "done": d.get("done", False),
            })
        for d in c.get("invoices", []):
            self.upsert(Invoice, {"case": case, "key": d["key"]}, {
                **base, "number": d["number"], "issued": parse_date(d["issued"]), "amount": Decimal(d["amount"]),
                "currency": d["currency"], "status": d.get("status", Invoice.Status.DRAFT),
            })
        for d in c.get("notes", []):
            author = users[d["author"]] if d.get("author") else None
            self.upsert(Note, {"case": case, "key": d["key"]}, {
                **base, "created": parse_datetime(d["created"]), "text": d["text"], "author": author,
            })

"""Firm import (format 1): every rule rejected with its JSON path, nothing written."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from django.apps import apps
from django.core.management import CommandError, call_command

from accounts.models import Firm, User
from practice.importer import ImportFailed, import_firm
from practice.models import Case, CaseTeamMember, Document
from tests.conftest import DEMO_FILE

pytestmark = pytest.mark.django_db


def demo_data() -> dict[str, Any]:
    return json.loads(DEMO_FILE.read_text())


def row_counts() -> dict[str, int]:
    return {
        m._meta.label: m.objects.count()
        for m in apps.get_models()
        if m._meta.app_label in {"accounts", "practice", "guardian", "graph_memory"}
    }


def test_demo_firm_loads_and_counts() -> None:
    counts = import_firm(DEMO_FILE.read_bytes())
    assert counts.created["cases"] == 4
    assert counts.created["users"] == 5
    assert Firm.objects.get(slug="hale-ward").timezone == "America/New_York"
    case = Case.objects.get(key="2026-014")
    assert case.client.name == "Northwind Holdings, Inc."
    assert [c.key for c in case.counterparties.all()] == ["castell"]
    assert Document.objects.get(case=case, key="spa-v3").pages[1].startswith("Clause 9")
    assert User.objects.get(username="dana").is_staff
    assert not User.objects.get(username="alice").is_staff


def test_reimport_changes_nothing() -> None:
    import_firm(DEMO_FILE.read_bytes())
    before = row_counts()
    counts = import_firm(DEMO_FILE.read_bytes())
    assert counts.changed == 0
    assert sum(counts.unchanged.values()) > 0
    assert row_counts() == before


def test_reimport_applies_team_changes() -> None:
    import_firm(DEMO_FILE.read_bytes())
    data = demo_data()
    data["cases"][2]["team"] = []  # carol leaves the lease case
    data["cases"][0]["team"] = ["bob"]
    counts = import_firm(json.dumps(data))
    assert counts.changed == 2
    lease = Case.objects.get(key="2025-088")
    assert not CaseTeamMember.objects.filter(case=lease).exists()
    assert list(Case.objects.get(key="2026-014").team.values_list("username", flat=True)) == ["bob"]


def _set(path: list[Any], value: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(data: dict[str, Any]) -> None:
        target = data
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value

    return mutate


def _delete(path: list[Any]) -> Callable[[dict[str, Any]], None]:
    def mutate(data: dict[str, Any]) -> None:
        target = data
        for step in path[:-1]:
            target = target[step]
        del target[path[-1]]

    return mutate


BAD_FILES = [
    ("format", _set(["format"], 2), "format: unsupported format 2"),
    ("unknown top field", _set(["extra"], 1), "extra: unknown field"),
    ("missing firm", _delete(["firm"]), "firm: is required"),
    ("bad slug", _set(["firm", "slug"], "Hale Ward"), "firm.slug: must be lowercase"),
    ("bad timezone", _set(["firm", "timezone"], "Mars/Olympus"), "firm.timezone: unknown time zone"),
    ("bad role", _set(["users", 1, "role"], "partner"), "users[1].role: must be one of lawyer, admin"),
    ("duplicate user", _set(["users", 1, "username"], "alice"), 'users[1].username: duplicate username "alice"'),
    ("unknown user field", _set(["users", 0, "age"], 40), "users[0].age: unknown field"),
    ("duplicate client key", _set(["clients", 1, "key"], "northwind"), 'clients[1].key: duplicate key "northwind"'),
    ("unknown client", _set(["cases", 1, "client"], "acme"), 'cases[1].client: unknown client "acme"'),
    ("unknown counterparty", _set(["cases", 0, "counterparties", 0], "nobody"), 'cases[0].counterparties[0]: unknown counterparty "nobody"'),
    ("unknown owner", _set(["cases", 2, "owner"], "zed"), 'cases[2].owner: unknown user "zed"'),
    ("unknown team member", _set(["cases", 3, "team"], ["alice", "zed"]), 'cases[3].team[1]: unknown user "zed"'),
    ("bad case status", _set(["cases", 0, "status"], "pending"), "cases[0].status: must be one of"),
    ("bad opened date", _set(["cases", 0, "opened"], "2026-13-01"), "cases[0].opened: must be a date"),
    ("duplicate case key", _set(["cases", 1, "key"], "2026-014"), 'cases[1].key: duplicate key "2026-014"'),
    ("unknown case field", _set(["cases", 0, "budget"], 5), "cases[0].budget: unknown field"),
    ("bad document status", _set(["cases", 0, "documents", 0, "status"], "done"), "cases[0].documents[0].status: must be one of"),
    ("timestamp without zone", _set(["cases", 0, "documents", 0, "created"], "2026-04-01T10:00:00"), "cases[0].documents[0].created: must be an ISO 8601 timestamp with a zone"),
    ("duplicate document key", _set(["cases", 0, "documents", 1, "key"], "spa-v3"), 'cases[0].documents[1].key: duplicate key "spa-v3"'),
    ("page not text", _set(["cases", 0, "documents", 0, "pages"], ["ok", 7]), "cases[0].documents[0].pages[1]: must be a string"),
    ("bad deadline due", _set(["cases", 1, "deadlines", 0, "due"], "soon"), "cases[1].deadlines[0].due: must be a date"),
    ("done not boolean", _set(["cases", 1, "deadlines", 0, "done"], "no"), "cases[1].deadlines[0].done: must be true or false"),
    ("amount not string", _set(["cases", 0, "invoices", 0, "amount"], 12500), "cases[0].invoices[0].amount: must be a decimal string"),
    ("amount not decimal", _set(["cases", 0, "invoices", 0, "amount"], "12,500"), "cases[0].invoices[0].amount: not a decimal number"),
    ("amount too precise", _set(["cases", 0, "invoices", 0, "amount"], "1.005"), "cases[0].invoices[0].amount: must be a finite amount"),
    ("bad currency", _set(["cases", 0, "invoices", 0, "currency"], "usd"), "cases[0].invoices[0].currency: must be an ISO 4217 code"),
    ("unknown note author", _set(["cases", 0, "notes", 0, "author"], "zed"), 'cases[0].notes[0].author: unknown user "zed"'),
    ("missing note text", _delete(["cases", 0, "notes", 0, "text"]), "cases[0].notes[0].text: is required"),
    ("cases not a list", _set(["cases"], {}), "cases: must be an array"),
]


@pytest.mark.parametrize(("label", "mutate", "expected"), BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_each_rule_is_rejected_with_its_path_and_nothing_written(label: str, mutate: Callable, expected: str) -> None:
    data = demo_data()
    mutate(data)
    before = row_counts()
    with pytest.raises(ImportFailed) as info:
        import_firm(json.dumps(data))
    assert any(error.startswith(expected) for error in info.value.errors), info.value.errors
    assert row_counts() == before


def test_a_broken_file_leaves_a_loaded_firm_untouched() -> None:
    import_firm(DEMO_FILE.read_bytes())
    before = row_counts()
    data = demo_data()
    data["cases"][0]["title"] = "Changed title"
    data["cases"][3]["team"] = ["zed"]
    with pytest.raises(ImportFailed):
        import_firm(json.dumps(data))
    assert row_counts() == before
    assert Case.objects.get(key="2026-014").title == "Northwind / Castell acquisition"


def test_username_of_another_firm_is_rejected() -> None:
    import_firm(DEMO_FILE.read_bytes())
    data = demo_data()
    data["firm"]["slug"] = "copycat-llp"
    with pytest.raises(ImportFailed) as info:
        import_firm(json.dumps(data))
    assert 'users[0].username: "alice" already belongs to another firm' in info.value.errors


@pytest.mark.parametrize("raw", [b"{not json", b"\xff\xfe", b"[]", b'"text"'])
def test_unreadable_documents_are_rejected(raw: bytes) -> None:
    with pytest.raises(ImportFailed) as info:
        import_firm(raw)
    assert info.value.errors[0].startswith("(document):")


def test_command_prints_counts_and_fails_naming_the_path(tmp_path, capsys) -> None:
    call_command("import_firm", str(DEMO_FILE))
    out = capsys.readouterr().out
    assert "cases: 4 created, 0 updated, 0 unchanged" in out
    call_command("import_firm", str(DEMO_FILE))
    assert "no changes" in capsys.readouterr().out

    data = copy.deepcopy(demo_data())
    data["cases"][3]["team"] = ["zed"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(CommandError, match="nothing was written"):
        call_command("import_firm", str(bad))
    assert 'cases[3].team[0]: unknown user "zed"' in capsys.readouterr().err
    with pytest.raises(CommandError, match="cannot read"):
        call_command("import_firm", str(tmp_path / "missing.json"))


def test_issue_token_prints_a_stable_token(capsys) -> None:
    import_firm(DEMO_FILE.read_bytes())
    call_command("issue_token", "alice")
    first = capsys.readouterr().out.strip()
    call_command("issue_token", "alice")
    assert capsys.readouterr().out.strip() == first
    assert len(first) == 40
    with pytest.raises(CommandError, match="no active user"):
        call_command("issue_token", "zed")

"""Firm import: input that used to end in a traceback is a clear error naming its JSON path, and nothing is written.

From an outside audit (issue 15, item 7): a list or object where a key, owner,
counterparty, time zone, username or author is expected (TypeError unhashable),
a NUL character (DataError), a lone surrogate (UnicodeEncodeError), 200,000-deep
nesting (RecursionError); and two things that were silently accepted: a field
given twice (last one won) and `"format": true` (True == 1 in Python).
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from django.core.management import CommandError, call_command

from practice.importer import MAX_DEPTH, ImportFailed, import_firm
from tests.host.test_import import _set, demo_data, row_counts

pytestmark = pytest.mark.django_db


WRONG_TYPES = [
    ("client key a list", _set(["clients", 0, "key"], ["northwind"]), "clients[0].key: must be a string"),
    ("client key an object", _set(["clients", 1, "key"], {"k": 1}), "clients[1].key: must be a string"),
    ("case key a list", _set(["cases", 0, "key"], ["2026-014"]), "cases[0].key: must be a string"),
    ("document key a list", _set(["cases", 0, "documents", 0, "key"], ["d"]), "cases[0].documents[0].key: must be a string"),
    ("client ref a list", _set(["cases", 0, "client"], ["northwind"]), "cases[0].client: must be a string naming a client, not an array"),
    ("client ref an object", _set(["cases", 0, "client"], {"key": "northwind"}), "cases[0].client: must be a string naming a client, not an object"),
    ("owner a list", _set(["cases", 1, "owner"], ["alice"]), "cases[1].owner: must be a string naming a user, not an array"),
    ("owner an object", _set(["cases", 1, "owner"], {}), "cases[1].owner: must be a string naming a user, not an object"),
    ("team member a list", _set(["cases", 0, "team"], [["bob"]]), "cases[0].team[0]: must be a string naming a user, not an array"),
    ("counterparty a list", _set(["cases", 0, "counterparties"], [["castell"]]), "cases[0].counterparties[0]: must be a string naming a counterparty"),
    ("counterparty an object", _set(["cases", 0, "counterparties"], [{}]), "cases[0].counterparties[0]: must be a string naming a counterparty, not an object"),
    ("timezone a list", _set(["firm", "timezone"], ["UTC"]), "firm.timezone: must be a string naming a time zone, not an array"),
    ("timezone an object", _set(["firm", "timezone"], {"tz": "UTC"}), "firm.timezone: must be a string naming a time zone, not an object"),
    ("username a list", _set(["users", 0, "username"], ["alice"]), "users[0].username: must be a string"),
    ("username an object", _set(["users", 2, "username"], {"u": 1}), "users[2].username: must be a string"),
    ("author a list", _set(["cases", 0, "notes", 0, "author"], ["alice"]), "cases[0].notes[0].author: must be a string naming a user, not an array"),
    ("author a number", _set(["cases", 0, "notes", 0, "author"], 7), "cases[0].notes[0].author: must be a string naming a user, not a number"),
    ("slug a list", _set(["firm", "slug"], ["hale-ward"]), "firm.slug: must be a string"),
    ("format true", _set(["format"], True), "format: unsupported format true"),
    ("format 1.0", _set(["format"], 1.0), "format: unsupported format 1.0"),
]
BAD_TEXT = [
    ("NUL in a title", _set(["cases", 0, "title"], "Northwind\x00"), "cases[0].title: holds a NUL character"),
    ("NUL in a page", _set(["cases", 0, "documents", 0, "pages"], ["ok", "a\x00b"]), "cases[0].documents[0].pages[1]: holds a NUL character"),
    ("NUL in a key", _set(["clients", 0, "key"], "north\x00wind"), "clients[0].key: holds a NUL character"),
    ("NUL in a username", _set(["users", 0, "username"], "alice\x00"), "users[0].username: holds a NUL character"),
    ("NUL in a field name", _set(["cases", 0, "ti\x00tle"], "x"), 'cases[0]: field name "ti\\u0000tle" holds a NUL character'),
    ("lone surrogate in a title", _set(["cases", 1, "title"], "Brightline \ud800"), "cases[1].title: holds an unpaired UTF-16 surrogate"),
    ("lone low surrogate in a note", _set(["cases", 0, "notes", 0, "text"], "\udc00 note"), "cases[0].notes[0].text: holds an unpaired UTF-16 surrogate"),
    ("lone surrogate in a firm name", _set(["firm", "name"], "\udfff"), "firm.name: holds an unpaired UTF-16 surrogate"),
    ("lone surrogate in a field name", _set(["firm", "\ud800"], "x"), 'firm: field name "\\ud800" holds an unpaired UTF-16 surrogate'),
    ("NUL in a team member", _set(["cases", 0, "team"], ["bob", "\x00"]), "cases[0].team[1]: holds a NUL character"),
]


def rejected(raw: str | bytes) -> list[str]:
    before = row_counts()
    with pytest.raises(ImportFailed) as info:
        import_firm(raw)
    assert row_counts() == before
    for error in info.value.errors:
        error.encode("utf-8")  # printable: no lone surrogate, no raw NUL
        assert "\x00" not in error
    return info.value.errors


@pytest.mark.parametrize(("label", "mutate", "expected"), WRONG_TYPES + BAD_TEXT, ids=[b[0] for b in WRONG_TYPES + BAD_TEXT])
def test_wrong_types_and_untextual_text_name_their_path(label: str, mutate: Callable, expected: str) -> None:
    data = demo_data()
    mutate(data)
    # ensure_ascii: the surrogates travel as JSON escapes, as in a real file.
    errors = rejected(json.dumps(data))
    assert any(error.startswith(expected) for error in errors), errors


def test_the_same_problems_over_a_loaded_firm_change_nothing() -> None:
    import_firm(json.dumps(demo_data()))
    for _, mutate, _ in WRONG_TYPES + BAD_TEXT:
        data = demo_data()
        mutate(data)
        rejected(json.dumps(data))


def _nested(depth: int, inner: str = "1") -> str:
    return "[" * depth + inner + "]" * depth


@pytest.mark.parametrize("depth", [200_000, 5_000, 900, MAX_DEPTH + 1])
def test_deep_nesting_is_named_at_its_path(depth: int) -> None:
    """200,000 levels made json recurse past Python's limit; a few hundred made every later check recurse."""
    data = demo_data()
    text = json.dumps(data).replace('"client": "northwind"', f'"client": {_nested(depth)}', 1)
    assert text != json.dumps(data)
    errors = rejected(text)
    assert len(errors) == 1, errors[:3]
    path, _, message = errors[0].partition(": ")
    assert message == f"nested deeper than {MAX_DEPTH} levels"
    assert path.startswith("cases[0].client[0][0]"), path
    assert path.count("[0]") == 1 + MAX_DEPTH - 3  # cases[0], then the levels below the document, cases and the case


def test_deep_nesting_at_the_top_and_in_bytes() -> None:
    errors = rejected(_nested(200_000).encode())
    assert errors[0].startswith("[0][0]") and errors[0].endswith(f"nested deeper than {MAX_DEPTH} levels")
    errors = rejected('{"format": 1, "x": ' + '{"a": ' * 100_000 + "1" + "}" * 100_000 + "}")
    assert errors[0].startswith("x.a.a.a."), errors[0][:40]


def test_the_format_is_still_accepted_at_its_own_depth() -> None:
    """The deepest legitimate value (a document's page) is well inside the limit."""
    import_firm(json.dumps(demo_data()))


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('"firm": {"slug": "other", "name": "Other", "timezone": "UTC"}', 'firm: field "firm" given more than once'),
        ('"format": 1', 'format: field "format" given more than once'),
    ],
)
def test_a_field_given_twice_is_rejected(raw: str, expected: str) -> None:
    text = json.dumps(demo_data())
    errors = rejected(text[:-1] + ", " + raw + "}")
    assert expected in errors, errors


def test_a_nested_field_given_twice_is_rejected_at_its_path() -> None:
    text = json.dumps(demo_data()).replace('"owner": "alice"', '"owner": "alice", "owner": "bob"', 1)
    assert 'cases[0].owner: field "owner" given more than once' in rejected(text)


def test_an_odd_field_name_given_twice_is_quoted_in_its_path() -> None:
    text = json.dumps(demo_data())[:-1] + ', "x y": 1, "x y": 2}'
    assert '["x y"]: field "x y" given more than once' in rejected(text)


def test_a_number_past_pythons_digit_limit_is_an_error_not_a_traceback() -> None:
    text = json.dumps(demo_data()).replace('"format": 1', '"format": ' + "1" * 5000, 1)
    assert rejected(text)[0].startswith("(document): not valid JSON")


def test_the_command_reports_them_in_its_usual_shape(tmp_path, capsys) -> None:
    data = demo_data()
    data["cases"][0]["owner"] = ["alice"]
    data["cases"][1]["title"] = "a\x00b"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(CommandError, match="nothing was written"):
        call_command("import_firm", str(bad))
    assert "cases[1].title: holds a NUL character" in capsys.readouterr().err
    deep = tmp_path / "deep.json"
    deep.write_text(_nested(200_000))
    with pytest.raises(CommandError, match="1 problem"):
        call_command("import_firm", str(deep))
    assert f"nested deeper than {MAX_DEPTH} levels" in capsys.readouterr().err

"""No SQL parameter list is built by hand: every statement with parameters runs as a `Stmt` (plumbing/stmt.py).

A statement's text and its parameters travel together, the parameters named in
the text (`sql()`), so none can be put in the wrong order. Read from the
source (as test_imports.py does): a call `<cursor>.execute(text, params)`
anywhere in `graph_memory/` whose parameters are not a `Stmt`'s `.params` is a
list ordered by hand. A statement with no parameters (`cursor.execute(text)`)
is fine, and so is running a `Stmt` (`stmt.execute(cursor)`).
"""

from __future__ import annotations

import ast
from pathlib import Path

import graph_memory

PACKAGE_DIR = Path(graph_memory.__file__).resolve().parent
# stmt.py is where a Stmt meets the cursor; migrations are frozen history.
EXEMPT = {PACKAGE_DIR / "plumbing" / "stmt.py"}


def _parameters(call: ast.Call) -> ast.expr | None:
    """What a cursor's `execute(sql, params)` call passes as its parameters (None: none at all)."""
    starred = [a for a in call.args if isinstance(a, ast.Starred)]
    if starred:
        return starred[0]  # execute(*pair): SQL and parameters from elsewhere, in an order no Stmt vouches for
    if len(call.args) >= 2:
        return call.args[1]
    return next((k.value for k in call.keywords if k.arg == "params"), None)


def raw_executes(path: Path, root: Path) -> list[str]:
    """`file:line` of each `.execute(sql, params)` / `.executemany(...)` in `path` whose parameters are
    anything but an attribute named `params` (a Stmt's)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr not in ("execute", "executemany"):
            continue
        params = _parameters(node)
        if params is None or (isinstance(params, ast.Attribute) and params.attr == "params"):
            continue
        found.append((node.lineno, f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(node)[:100]}"))
    return [offender for _, offender in sorted(found)]


def _offenders(root: Path) -> list[str]:
    return [
        offender
        for path in sorted(root.rglob("*.py"))
        if "migrations" not in path.parts and path not in EXEMPT
        for offender in raw_executes(path, root)
    ]


def test_no_statement_in_the_package_runs_with_parameters_ordered_by_hand() -> None:
    offenders = _offenders(PACKAGE_DIR)
    assert offenders == [], (
        "SQL run with a parameter list built by hand; build it with graph_memory.plumbing.stmt.sql() "
        "(named %(value)s parameters, {part} statements) and run it with Stmt.execute(cursor):\n" + "\n".join(offenders)
    )


def test_the_check_finds_a_planted_list_of_parameters(tmp_path: Path) -> None:
    (tmp_path / "planted.py").write_text(
        "def read(cursor, statement, pair, firm_id, text, params):\n"
        "    cursor.execute('SELECT 1')\n"  # no parameters: fine
        "    statement.execute(cursor)\n"  # a Stmt: fine
        "    cursor.execute(statement.sql, statement.params)\n"  # a Stmt's own: fine
        "    cursor.execute('SELECT %s', [firm_id])\n"
        "    cursor.execute(text, params)\n"
        "    cursor.execute(*pair)\n"
        "    cursor.executemany(text, [(1,), (2,)])\n"
        "    cursor.execute(text, params=(firm_id,))\n"
    )
    (tmp_path / "migrations").mkdir()
    (tmp_path / "migrations" / "0001_initial.py").write_text("def f(cursor):\n    cursor.execute('%s', [1])\n")
    assert [o.split(": ")[0] for o in _offenders(tmp_path)] == [f"planted.py:{line}" for line in (5, 6, 7, 8, 9)]

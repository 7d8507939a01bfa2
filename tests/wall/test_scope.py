"""The scope and the statements it runs: `sql()` keeps every parameter beside its text, each read is declared once."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graph_memory.plumbing.stmt import Stmt, sql
from graph_memory.viewer import search
from graph_memory.wall import reads
from graph_memory.wall.scope import Read, declared


def test_values_and_parts_come_out_in_the_order_the_text_names_them() -> None:
    part = Stmt("SELECT id FROM t WHERE a = %s AND b = %s", (1, 2))
    built = sql("WITH v AS ({part}) SELECT %(x)s, * FROM v WHERE c = %(y)s OR d = %(x)s", part=part, x="X", y="Y")
    assert built.sql == "WITH v AS (SELECT id FROM t WHERE a = %s AND b = %s) SELECT %s, * FROM v WHERE c = %s OR d = %s"
    assert built.params == (1, 2, "X", "Y", "X")


def test_a_template_given_as_a_part_is_built_with_the_same_names() -> None:
    built = sql("SELECT * FROM ({inner}) i WHERE i.firm = %(firm)s", inner="SELECT %(firm)s AS firm, {v}", firm=7,
                v=Stmt("%s", ("v",)))  # fmt: skip
    assert built.sql == "SELECT * FROM (SELECT %s AS firm, %s) i WHERE i.firm = %s"
    assert built.params == (7, "v", 7)


def test_literal_percents_stay_and_unnamed_parameters_are_refused() -> None:
    assert sql("SELECT 'a%%' LIKE %(p)s", p="a%").sql == "SELECT 'a%%' LIKE %s"
    with pytest.raises(ValueError, match="unnamed parameter"):
        sql("SELECT %s", x=1)


def test_white_space_and_comments_go_but_quoted_text_stays_as_written() -> None:
    template = """
        SELECT 'a  b
        c', "odd  name", $fn$ x  -- kept
        y $fn$, $$ z  w $$  -- a comment, gone
        FROM t   /* and this */ WHERE a = %(a)s
    """
    built = sql(template, a=1)
    assert built.sql == (
        " SELECT 'a  b\n        c', \"odd  name\", $fn$ x  -- kept\n        y $fn$, $$ z  w $$ FROM t WHERE a = %s "
    )
    # A literal holding what would otherwise start a comment, or a doubled quote, is read to its real end.
    assert sql("SELECT '--x' ,  'it''s  so'   -- gone\n  , 1").sql == "SELECT '--x' , 'it''s  so' , 1"


@given(st.lists(st.sampled_from(["SELECT", "x", "'a  b'", "'it''s'", '"c  d"', "--note\n", "/* n */", "1"]), max_size=12),
       st.lists(st.sampled_from([" ", "  ", "\n", "\n    ", "\t"]), min_size=12, max_size=12))  # fmt: skip
def test_compacting_keeps_every_quoted_piece_and_drops_only_space_and_comments(pieces: list[str], gaps: list[str]) -> None:
    built = sql("".join(p + g for p, g in zip(pieces, gaps[: len(pieces)], strict=True)) + "1").sql
    # Every piece that is not a comment, in order, one space apart (a comment and the space around it: one space).
    assert built.strip() == " ".join([p for p in pieces if not p.startswith(("--", "/*"))] + ["1"])


def test_a_missing_name_says_which() -> None:
    with pytest.raises(KeyError, match=r"%\(firm\)s"):
        sql("SELECT %(firm)s")
    with pytest.raises(KeyError, match=r"\{visible\}"):
        sql("SELECT * FROM ({visible}) v")
    with pytest.raises(ValueError, match="contains itself"):
        sql("{a}", a="x {a}")
    with pytest.raises(TypeError, match="must be a Stmt or a template"):
        sql("{a}", a=3)


@given(st.lists(st.sampled_from(["a", "b", "c", "part"]), max_size=12))
def test_any_template_binds_each_marker_to_its_own_value(order: list[str]) -> None:
    template = " ".join("{part}" if name == "part" else f"%({name})s" for name in order)
    built = sql(template, a=1, b=2, c=3, part=Stmt("(%s, %s)", ("p1", "p2")))
    expected: list[object] = []
    for name in order:
        expected += ["p1", "p2"] if name == "part" else [{"a": 1, "b": 2, "c": 3}[name]]
    assert built.params == tuple(expected)
    assert built.sql.count("%s") == len(expected)


def test_every_read_declares_a_firm_admins_and_a_walled_statement_that_build() -> None:
    """Each declared read builds with the names its declaration lists; the sighted statement where there is one."""
    names = {
        "firm": 1, "visible": Stmt("SELECT 1"), "visible_listed": Stmt("SELECT 1"), "holders": Stmt("SELECT 1"), "node": "n", "kind": None, "fetch": 2,
        "prefix": "a%", "pattern": "%a%", "firm_words": "q", "holder_words": "q", "found": Stmt("SELECT NULL::uuid"),
        "key": "k", "words": [], "candidates": 3, "variants": [], "readings": [], "word_ids": [], "few": 4,
        "whole_firm": False, "query": "[1]", "model": "m", "depth": 10, "cap": "cap AS (SELECT 1 AS cap)",
        "own_index": Stmt("false"), "firm_ef": 40, "shared_ef": 40, "references": Stmt("SELECT 1, 'r'"), "q": "q",
        "firms_vectors": search._FIRMS_VECTOR_RANKING, "walled_vectors": search._WALLED_VECTOR_RANKING,
        "few_vectors": search._FEW_VECTOR_RANKING,
        "all_words": True, "similarity": 0.5, "case_kind": "case", "headline": "", "exact_max": 1, "exact_share": 0.1,
        "forced_cap": 1, "grants_past": "false", "than": "1", "clocks": Stmt("SELECT 1, 1, now()"), "lines": Stmt("SELECT 1"),
    }  # fmt: skip
    assert {read.name for read in reads.READS} == {"node", "walk", "lookup", "cases_of_node", "conflicts"}
    assert {read.name for read in declared()} == {read.name for read in reads.READS} | {"search", "vector_ranking", "memory_index"}
    for read in declared():
        assert isinstance(read, Read) and read.whole_firm and read.walled, read.name
        assert read.sighted or read.unsighted, read.name  # three statements, or the reason for two
        for template in filter(None, (read.whole_firm, read.walled, read.sighted, read.few)):
            built = sql(template, **names)
            assert "{" not in re.sub(r"'[^']*'", "", built.sql), read.name  # every part spliced in
            assert built.sql.count("%s") == len(built.params), read.name


def test_a_read_says_why_it_has_no_sighted_statement() -> None:
    with pytest.raises(ValueError, match="or the reason it has none"):
        Read(name="test-no-reason", columns=1, whole_firm="SELECT 1", walled="SELECT 1")
    with pytest.raises(ValueError, match="declared already"):
        Read(name="walk", columns=1, whole_firm="SELECT 1", walled="SELECT 1", unsighted="twice")
    with pytest.raises(ValueError, match="a statement for few cases is for a read the sight does not serve"):
        Read(name="test-few-sighted", columns=1, whole_firm="SELECT 1", walled="SELECT 1", sighted="SELECT 1", few="SELECT 1")

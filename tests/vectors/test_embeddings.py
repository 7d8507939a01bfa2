"""What an embedder returns is checked before it is used (`_checked`), and a vector is sent as text
(`vector_text`) that PostgreSQL reads as the same vector pgvector's own `to_text` gives."""

from __future__ import annotations

import math

import numpy as np
import pytest
from django.db import connection
from hypothesis import given, settings
from hypothesis import strategies as st
from pgvector import Vector

from graph_memory.vectors import embeddings
from graph_memory.vectors.embeddings import EmbeddingError, vector_dimensions, vector_text

WIDTH = vector_dimensions()


def _one(vector: object) -> list[float]:
    return embeddings._checked([vector], 1)[0]


@pytest.mark.parametrize(
    "garbage",
    [
        ["0.1"] * WIDTH,  # a string
        [None] * WIDTH,
        [True] * WIDTH,  # a boolean is not a number here
        [0.1] * (WIDTH - 1) + [math.nan],
        [0.1] * (WIDTH - 1) + [math.inf],
        [0.0] * WIDTH,  # zero
        [0.1] * (WIDTH - 1),  # too narrow
        [0.1] * (WIDTH - 1) + [10**400],  # an integer no float holds
        (0.1,) * WIDTH,  # not a list
    ],
    ids=["string", "null", "boolean", "nan", "inf", "zero", "narrow", "huge int", "tuple"],
)
def test_garbage_is_refused(garbage: object) -> None:
    with pytest.raises(EmbeddingError):
        _one(garbage)


def test_real_numbers_of_any_kind_are_plain_floats_after() -> None:
    mixed = [np.float32(0.25), 1, 0.5, *([0.125] * (WIDTH - 3))]
    checked = _one(mixed)
    assert checked[:3] == [0.25, 1.0, 0.5] and all(type(v) is float for v in checked)
    with pytest.raises(EmbeddingError):
        _one([np.float32(0.25), "x", *([0.1] * (WIDTH - 2))])


@pytest.mark.django_db
@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-2.0, 2.0, width=32) | st.floats(-2.0, 2.0, width=64), min_size=WIDTH, max_size=WIDTH))
def test_vector_text_reads_back_as_pgvectors_own_text(values: list[float]) -> None:
    ours, theirs = vector_text(values), Vector(values).to_text()
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::vector = %s::vector, %s::vector::text = %s::vector::text", [ours, theirs] * 2)
        assert cursor.fetchone() == (True, True)
    assert vector_text(np.asarray(values, dtype=np.float32)) == ours
    assert len(ours) < len(theirs) or ours == theirs

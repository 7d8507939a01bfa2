"""Synthetic firms with many summarised, embedded cases: for the recall test and bench/bench_search.py.

Cases go in with one INSERT ... SELECT per firm and summaries with one binary
COPY, so 100,000 of them load in seconds; the connection map is built by the
real `graph_rebuild_firm`. Vectors are random with a low intrinsic dimension
(a random rank-RANK subspace of the 384 dimensions plus noise, normalised),
which is how sentence embeddings behave; on vectors uniform over the whole
sphere every neighbour is about equally far and no approximate index can rank them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from django.db import connection, transaction
from django.utils import timezone

from accounts.models import Firm, User
from graph_memory import services
from graph_memory.models import CaseSummary
from graph_memory.vectors.embeddings import Embedded, vector_dimensions
from practice.models import Case, CaseUserObjectPermission, Client

MODEL = "synthetic:lowrank"
RANK = 16
NOISE = 0.35
CLIENTS_PER_FIRM = 20
LEGAL_WORDS = (
    "lease rent landlord tenant escalation dispute merger acquisition shares escrow antitrust clearance "
    "termination employment retaliation claim settlement invoice logistics supply contract warranty "
    "disclosure mediation arbitration patent licence royalty insurance coverage fraud audit tax customs "
    "shipment delay damages injunction appeal hearing filing deadline discovery deposition witness expert "
    "valuation loan guarantee security default restructuring insolvency creditor bond regulator compliance"
).split()
_SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
# A vocabulary with a long tail, drawn Zipf-like: a few words are in most
# summaries, most words in few, as in real text (so full-text search is selective).
WORDS = LEGAL_WORDS + [a + b + c for a in _SYLLABLES[:16] for b in _SYLLABLES[16:32] for c in _SYLLABLES[32:48]]
_WEIGHTS = 1.0 / (np.arange(len(WORDS)) + 20.0)
_WEIGHTS /= _WEIGHTS.sum()
WORDS_PER_SUMMARY = 120


def query_words(index: int, count: int = 3) -> str:
    """A few mid-frequency words (each in roughly 1-5% of summaries), different for each index."""
    return " ".join(WORDS[200 + (index * 37 + j * 101) % 800] for j in range(count))


@dataclass
class Corpus:
    basis: np.ndarray
    firms: list[Firm] = field(default_factory=list)
    case_ids: dict[int, np.ndarray] = field(default_factory=dict)  # firm id -> case ids
    vectors: dict[int, np.ndarray] = field(default_factory=dict)  # firm id -> one row per case id
    big_client: dict[int, int] = field(default_factory=dict)  # firm id -> client id with the most cases

    def queries(self, count: int, *, seed: int) -> np.ndarray:
        return _normalised(np.random.default_rng(seed), count, self.basis)


def _normalised(rng: np.random.Generator, count: int, basis: np.ndarray) -> np.ndarray:
    raw = rng.standard_normal((count, basis.shape[0]), dtype=np.float32) @ basis
    raw += NOISE * rng.standard_normal((count, basis.shape[1]), dtype=np.float32)
    return raw / np.linalg.norm(raw, axis=1, keepdims=True)


def _summary_defaults() -> tuple[list[str], list[object]]:
    """Every CaseSummary column this loader does not set, with its model default as the database stores it."""
    own = {"id", "case", "firm", "text", "embedding", "embedding_model", "search_vector", "stale", "written_at"}
    columns, values = [], []
    for f in CaseSummary._meta.concrete_fields:
        if f.name not in own:
            columns.append(f.column)
            values.append(f.get_db_prep_save(f.get_default(), connection))
    return columns, values


def _insert_cases(firm: Firm, owner: User, clients: list[int], big: int, count: int) -> np.ndarray:
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO {Case._meta.db_table} (firm_id, key, title, status, opened, description, client_id, owner_id, updated_at)
            SELECT %s, 'S-' || lpad(g::text, 6, '0'), 'Synthetic matter ' || g, 'open', DATE '2025-01-01' + (g %% 700),
                   'A synthetic matter.', CASE WHEN g <= %s THEN %s ELSE (%s::bigint[])[1 + g %% %s] END, %s,
                   now() - g * interval '1 minute'
            FROM generate_series(1, %s) AS g
            RETURNING id
            """,
            (firm.pk, big, clients[0], clients[1:], len(clients) - 1, owner.pk, count),
        )
        return np.array(sorted(r[0] for r in cursor.fetchall()), dtype=np.int64)


def _random_texts(rng: np.random.Generator, count: int) -> list[str]:
    words = np.array(WORDS)
    picks = rng.choice(len(words), size=(count, WORDS_PER_SUMMARY), p=_WEIGHTS)
    return ["Status\n- " + " ".join(words[pick]) + "." for pick in picks]


def _copy_summaries(
    firm_id: int, case_ids: np.ndarray, vectors: np.ndarray, texts: Sequence[str], model: str = MODEL
) -> None:
    from pgvector.psycopg import register_vector

    raw = connection.connection
    register_vector(raw)
    columns, values = _summary_defaults()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("CREATE TEMP TABLE gm_synthetic (case_id bigint, text text, embedding vector) ON COMMIT DROP")
        with cursor.cursor.copy("COPY gm_synthetic (case_id, text, embedding) FROM STDIN WITH (FORMAT BINARY)") as copy:
            copy.set_types(["int8", "text", "vector"])
            for case_id, vector, text in zip(case_ids, vectors, texts, strict=True):
                copy.write_row((int(case_id), text, np.asarray(vector, dtype=np.float32)))
        cursor.execute(
            f"""
            INSERT INTO {CaseSummary._meta.db_table}
                (case_id, firm_id, text, embedding, embedding_model, search_vector, stale, written_at, {", ".join(columns)})
            SELECT case_id, %s, text, embedding, %s, to_tsvector('english', text), false, %s, {", ".join(["%s"] * len(values))}
            FROM gm_synthetic
            """,
            (firm_id, model, timezone.now(), *values),
        )
        cursor.execute("DROP TABLE gm_synthetic")


def load_corpus(
    *, firms: Sequence[Firm], per_firm: int, big_client_cases: int = 0, seed: int = 7, with_graph: bool = True
) -> Corpus:
    """`per_firm` summarised, embedded cases in each firm, owned by one lawyer, plus (`with_graph`) the connection map.

    The first `big_client_cases` cases of each firm are for one client. Search
    indexes are dropped during the load and rebuilt after it (much faster).
    """
    rng = np.random.default_rng(seed)
    corpus = Corpus(basis=rng.standard_normal((RANK, vector_dimensions()), dtype=np.float32))
    indexes = [i for i in CaseSummary._meta.indexes if i.name in {"gm_summary_fts", "gm_summary_embedding_hnsw"}]
    with connection.schema_editor() as editor:
        for index in indexes:
            editor.remove_index(CaseSummary, index)
    for firm in firms:
        owner = User.objects.create(username=f"owner-{firm.slug}", firm=firm, name=f"Owner of {firm.name}")
        clients = Client.objects.bulk_create(
            Client(firm=firm, key=f"client-{i}", name=f"Client {i} Holdings, Inc.") for i in range(CLIENTS_PER_FIRM + 1)
        )
        case_ids = _insert_cases(firm, owner, [c.pk for c in clients], big_client_cases, per_firm)
        vectors = _normalised(rng, len(case_ids), corpus.basis)
        _copy_summaries(firm.pk, case_ids, vectors, _random_texts(rng, len(case_ids)))
        corpus.firms.append(firm)
        corpus.case_ids[firm.pk], corpus.vectors[firm.pk] = case_ids, vectors
        corpus.big_client[firm.pk] = clients[0].pk
        if with_graph:
            services.graph_rebuild_firm(firm_id=firm.pk)
    with connection.cursor() as cursor:
        # Inside a test's transaction the deferred foreign-key checks are still
        # pending, and PostgreSQL will not build an index over such a table.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")
        cursor.execute("SET maintenance_work_mem = '512MB'")
    with connection.schema_editor() as editor:
        for index in indexes:
            editor.add_index(CaseSummary, index)
    with connection.cursor() as cursor:
        cursor.execute("RESET maintenance_work_mem")
        cursor.execute(f"ANALYZE {CaseSummary._meta.db_table}")
    return corpus


def load_documents(*, firm: Firm, texts: Sequence[str], vectors: np.ndarray, model: str) -> np.ndarray:
    """One case per text in `firm`, summarised with that text and embedded with the given vector; returns the case ids."""
    owner = User.objects.create(username=f"owner-{firm.slug}", firm=firm, name=f"Owner of {firm.name}")
    clients = Client.objects.bulk_create(Client(firm=firm, key=f"client-{i}", name=f"Client {i}") for i in range(2))
    case_ids = _insert_cases(firm, owner, [c.pk for c in clients], 0, len(texts))
    _copy_summaries(firm.pk, case_ids, vectors, texts, model)
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {CaseSummary._meta.db_table}")
    return case_ids


def grant_share(corpus: Corpus, firm: Firm, *, share: float, username: str, seed: int = 11) -> tuple[User, np.ndarray]:
    """A lawyer of `firm` allowed to open a random `share` of its cases (at least one); returns them and those ids."""
    from django.contrib.auth.models import Permission

    ids = corpus.case_ids[firm.pk]
    count = max(1, round(len(ids) * share))
    chosen = np.sort(np.random.default_rng(seed).choice(ids, size=count, replace=False))
    viewer = User.objects.create(username=username, firm=firm)
    permission = Permission.objects.get(codename="view_case", content_type__app_label="practice")
    CaseUserObjectPermission.objects.bulk_create(
        CaseUserObjectPermission(permission=permission, user=viewer, content_object_id=int(c)) for c in chosen
    )
    return viewer, chosen


def exact_top(corpus: Corpus, firm: Firm, visible: np.ndarray, query: np.ndarray, k: int) -> list[int]:
    """The k visible cases nearest to `query` by cosine distance, computed here, outside the database."""
    ids = corpus.case_ids[firm.pk]
    mask = np.isin(ids, visible)
    vectors = corpus.vectors[firm.pk][mask]
    similarity = vectors @ query / np.linalg.norm(vectors, axis=1)
    order = np.argsort(-similarity, kind="stable")[:k]
    return [int(i) for i in ids[mask][order]]


def exact_cap() -> int:
    """How many visible vectors search ranks exactly now (search._exact_cap's rule, from the index's estimate),
    for a viewer whose firm has no index of its own."""
    from graph_memory import conf

    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE oid = %s::regclass", [CaseSummary._meta.db_table])
        estimate = max(cursor.fetchone()[0], 0)
    return max(int(conf.get("SEARCH_EXACT_MAX")), int(float(conf.get("SEARCH_EXACT_SHARE")) * estimate))


class FixedEmbedder:
    """An embedder that answers every text with one given vector (synthetic corpora have no real text)."""

    name, logs_calls = "synthetic", False

    def __init__(self, vector: Sequence[float], *, model: str = MODEL) -> None:
        # Python floats, as every embedder of the app returns them (a real embedder's `tolist()` or JSON):
        # numpy's own `tolist()`, where a loop over a float32 array's elements took 0.07 ms of each timed search.
        self.vector, self.model = np.asarray(vector, dtype=np.float64).tolist(), model

    def embed(self, texts: Sequence[str]) -> Embedded:
        return Embedded(vectors=[list(self.vector) for _ in texts])

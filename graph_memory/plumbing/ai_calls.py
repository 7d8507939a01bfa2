"""The model-call log: the one writer of `AICall` rows (summaries, document indexes and answers, embeddings).

Every row it writes is announced by `signals.ai_call_finished` once it is saved, so a host's AI audit
trail sees every model call, whichever part of the memory made it (issue 30: the embeddings wrote
their own rows and never announced them).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from django.db import transaction

from graph_memory import signals
from graph_memory.models import AICall
from graph_memory.summaries.base import ModelCall

logger = logging.getLogger(__name__)

ERROR_MAX_CHARS = 500


def log_model_calls(
    calls: Sequence[ModelCall],
    *,
    firm_id: int,
    case_id: int | None,
    purpose: str,
    writer_name: str,
    outcome: str,
    error: str,
    report: dict[str, Any] | None = None,
) -> list[AICall]:
    """One AICall row per HTTP attempt; the last carries the outcome and the verification counts,
    earlier ones (a refused response format, a retried error) are errors. Counts, ids and the
    server's scrubbed explanation only, never prompt or output text. Counts are `AICall.bounded`:
    whatever a writer reports, the rows fit their columns. Each saved row is then sent as
    `signals.ai_call_finished` (`send_robust`: a failing receiver is logged, never raised)."""
    logged = []
    # One block: all of a write's calls or none, and a row the database refuses rolls back
    # only this block, never a transaction the caller has open.
    with transaction.atomic():
        for position, call in enumerate(calls):
            last = position == len(calls) - 1
            logged.append(
                AICall.objects.create(
                    firm_id=firm_id,
                    case_id=case_id,
                    purpose=purpose,
                    writer=writer_name,
                    model=call.model[:200],
                    tokens_in=AICall.bounded(call.tokens_in),
                    tokens_out=AICall.bounded(call.tokens_out),
                    tokens_estimated=call.estimated,
                    latency_ms=AICall.bounded(call.latency_ms),
                    outcome=outcome if last else AICall.Outcome.ERROR,
                    error=(call.error or (error if last else ""))[:ERROR_MAX_CHARS],
                    request_mode=call.mode,
                    server_error=call.server_error[:300],
                    report=(report or {}) if last else {},
                )
            )
    for ai_call in logged:
        for receiver, response in signals.ai_call_finished.send_robust(sender=AICall, ai_call=ai_call):
            if isinstance(response, Exception):
                logger.error("ai_call_finished receiver %r failed: %r", receiver, response)
    return logged

"""The memory layer's documented signals, for hosts and for the layer's own modules.

Connect with `@receiver(events.summary_saved)`. Both are sent with
`send_robust`, so a failing receiver is logged and never undoes the work that
triggered it.

- `summary_saved(sender, case_id, summary)`: a case summary passed
  verification and was committed. `summary` is the saved `CaseSummary`. Sent
  after the transaction commits (immediately when no transaction is open).
- `ai_call_finished(sender, ai_call)`: one model call finished, successfully
  or not; `ai_call` is the saved `AICall` row (counts and ids, never text), so
  a host can feed its own AI audit trail.
"""

from __future__ import annotations

from django.dispatch import Signal

summary_saved = Signal()
ai_call_finished = Signal()

"""One finding of the lint pass, before it is stored."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from graph_memory.models import LintFinding

HIGH, MEDIUM, LOW = (s.value for s in LintFinding.Severity)


@dataclass(frozen=True)
class Finding:
    kind: str
    code: str
    severity: str
    message: str
    case_id: int | None = None
    records: list[Any] = field(default_factory=list)

    def row(self, *, run: Any, firm_id: int) -> LintFinding:
        return LintFinding(
            run=run, firm_id=firm_id, case_id=self.case_id, kind=self.kind, code=self.code,
            severity=self.severity, message=self.message, records=self.records,
        )  # fmt: skip

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind, "code": self.code, "severity": self.severity, "case_id": self.case_id,
            "message": self.message, "records": self.records,
        }  # fmt: skip

"""Cases with long documents for the document tests: one case the personas see, one they never may."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rest_framework.authtoken.models import Token

from graph_memory import services
from graph_memory.models import Node
from practice.models import Case, Document
from tests.factories import CaseFactory, DocumentFactory
from tests.long_documents import Question, long_agreement

ESCROW_CLAUSE = (
    "The Escrow Amount of EUR 4,800,000 shall be released to the Sellers eighteen months after Completion, "
    "save for amounts subject to a pending Claim."
)


@dataclass
class DocWorld:
    personas: Any
    case: Case
    document: Document
    pages: list[str]
    questions: list[Question]
    hidden_case: Case
    hidden_document: Document
    tokens: dict[str, str]

    @property
    def case_node(self) -> str:
        return str(Node.objects.get(kind=Node.Kind.CASE, ref_id=self.case.pk).pk)

    @property
    def hidden_node(self) -> str:
        return str(Node.objects.get(kind=Node.Kind.CASE, ref_id=self.hidden_case.pk).pk)

    def headers(self, persona: str) -> dict[str, str]:
        return {"Authorization": f"Token {self.tokens[persona]}"}


def doc_world(personas: Any, *, articles: int = 8, pages_per_article: int = 4) -> DocWorld:
    """The personas' case holds a generated agreement ("spa"); a case of the same firm that only the firm
    admin may open holds a secret one ("secret-spa") whose words no other case has."""
    pages, questions = long_agreement(articles=articles, pages_per_article=pages_per_article)
    document = DocumentFactory(case=personas.case, key="spa", title="Share Purchase Agreement", pages=pages)
    hidden_case = CaseFactory(firm=personas.firm, title="Project Nightingale")
    secret = [f"ARTICLE 1 NIGHTINGALE ESCROW\n\nThe Nightingale escrow is released on the Zephyr milestone. Page {i}"
              for i in range(1, 4)]  # fmt: skip
    hidden_document = DocumentFactory(case=hidden_case, key="secret-spa", title="Nightingale SPA", pages=secret)
    services.graph_rebuild_firm(firm_id=personas.firm.pk)
    services.graph_rebuild_firm(firm_id=personas.other_firm_admin.firm_id)
    users = {name: getattr(personas, name) for name in ("owner", "teammate", "outsider", "firm_admin", "other_firm_admin")}
    tokens = {name: Token.objects.create(user=user).key for name, user in users.items()}
    return DocWorld(personas, personas.case, document, pages, questions, hidden_case, hidden_document, tokens)

"""The third host's adapter: the least a product must tell the memory.

No guardian (the wall's input is `member_case_ids`: the matters a lawyer
instructs), no team and no counterparties (their map inputs are empty
QuerySets, `.none()`), the client a plain name on the matter (its node is
keyed by the matter, the only row that holds it), papers as one-page
documents.
"""

from __future__ import annotations

from typing import Any

from django.contrib.postgres.expressions import ArraySubquery
from django.db.models import Case as SqlCase
from django.db.models import CharField, F, QuerySet, Value, When
from django.db.models.functions import Coalesce, Concat, Left, NullIf

from graph_memory.adapter import CaseHeader, Changes, MemoryAdapter, Party, Record, SliceLimits, Watch
from tests.third_host.chambers.models import Counsel, Matter, Paper


def _counsel_label(prefix: str = "") -> Any:
    return Coalesce(NullIf(F(f"{prefix}display_name"), Value("")), F(f"{prefix}username"))  # as Counsel.__str__


def _matter_label() -> Any:
    return Concat(F("file_no"), Value(" "), F("caption"), output_field=CharField())  # as Matter.__str__


def _scope(*, firm_id: int | None, case_id: int | None) -> dict[str, int]:
    if (firm_id is None) == (case_id is None):
        raise ValueError("give exactly one of firm_id and case_id")
    return {"chambers_id": firm_id} if firm_id is not None else {"pk": case_id}  # type: ignore[dict-item]


def _matter_self(matter: Any) -> list[int]:
    return [matter.pk]


def _own_matter(paper: Any) -> list[int]:
    return [paper.matter_id]


class ChambersMemoryAdapter(MemoryAdapter):
    case_firm_field = "chambers"
    firm_slug_field = "handle"
    case_admin_search_fields = ("file_no", "caption")

    def viewer_firm_id(self, viewer: Any) -> int | None:
        return getattr(viewer, "chambers_id", None)

    def viewer_is_firm_admin(self, viewer: Any) -> bool:
        return getattr(viewer, "chambers_id", None) is not None and viewer.head_of_chambers

    def member_case_ids(self, viewer: Any) -> QuerySet[Any]:
        return Matter.objects.filter(instructing_lawyer_id=viewer.pk).values("pk")

    def case_reference(self) -> Any:
        return F("file_no")

    def case_title(self) -> Any:
        return F("caption")

    def case_activity(self) -> Any:
        return F("updated_at")

    def case_header_annotations(self) -> dict[str, Any]:
        return {
            "reference": F("file_no"),
            "title": F("caption"),
            "status": Value("Open", output_field=CharField()),
            "opened": F("opened"),
            "description": Value("", output_field=CharField()),
            "client_name": NullIf(F("client"), Value("")),
            # No counterparties here: an array subquery that selects nothing.
            "counterparty_names": ArraySubquery(Matter.objects.none().values("caption")),
        }

    def case_header(self, *, case_id: int, limits: SliceLimits) -> CaseHeader | None:
        matter = Matter.objects.filter(pk=case_id).first()
        if matter is None:
            return None
        client = Party(str(matter.pk), matter.client, "client") if matter.client else None
        return CaseHeader(
            case_id=matter.pk, firm_id=matter.chambers_id, reference=matter.file_no, title=matter.caption,
            status="Open", opened=matter.opened, description="", client=client,
        )  # fmt: skip

    def case_records(self, *, case_id: int, limits: SliceLimits) -> dict[str, list[Record]]:
        papers = (
            Paper.objects.filter(matter_id=case_id).order_by("-filed_at", "-pk")
            .annotate(head=Left("body", limits.text_chars)).values("pk", "title", "filed_at", "head")
        )[: limits.per_kind["document"]]  # fmt: skip
        documents = [Record("document", str(p["pk"]), title=p["title"], date=p["filed_at"], pages=(p["head"],)) for p in papers]
        return {"deadline": [], "invoice": [], "note": [], "draft": [], "document": documents}

    # --- the connection map -----------------------------------------------------------------------

    def graph_case_headers(self, *, firm_id: int | None = None, case_id: int | None = None) -> QuerySet[Any]:
        # The client is a name on the matter: its node stands for that matter's client.
        return (
            Matter.objects.filter(**_scope(firm_id=firm_id, case_id=case_id))
            .order_by()
            .values(
                case_ref=F("id"),
                firm_ref=F("chambers_id"),
                case_label=_matter_label(),
                owner_ref=F("instructing_lawyer_id"),
                owner_label=_counsel_label("instructing_lawyer__"),
                client_ref=SqlCase(When(client="", then=None), default=F("id")),
                client_label=NullIf(F("client"), Value("")),
            )
        )

    def graph_team_links(self, *, firm_id: int | None = None, case_id: int | None = None) -> QuerySet[Any]:
        return Matter.objects.none().values(case_ref=F("id"), user_ref=F("instructing_lawyer_id"), user_label=F("caption"))

    def graph_counterparty_links(self, *, firm_id: int | None = None, case_id: int | None = None) -> QuerySet[Any]:
        return Matter.objects.none().values(case_ref=F("id"), party_ref=F("id"), party_label=F("client"))

    def graph_label(self, *, kind: str, ref_id: int) -> str | None:
        if kind == "lawyer":
            return Counsel.objects.filter(pk=ref_id).values_list(_counsel_label(), flat=True).first()
        label = _matter_label() if kind == "case" else F("client")
        return Matter.objects.filter(pk=ref_id).values_list(label, flat=True).first()

    def graph_linked_case_ids(self, instance: Any) -> list[int]:
        return []  # no many-to-many links to watch

    def changes(self) -> Changes:
        return Changes(
            stale=[
                Watch(Matter, _matter_self, fields=("file_no", "caption", "client", "opened")),
                Watch(Paper, _own_matter),
            ],
            graph=[Watch(Matter, _matter_self, fields=("file_no", "caption", "client", "instructing_lawyer_id"))],
            labels={Counsel: "lawyer"},
            label_fields={Counsel: ("display_name", "username")},
        )

"""The memory health page of Django admin: one firm's freshness, spend and one case's map.

The page costs a constant number of queries however much history the firm
has: counts are one aggregate, nights are grouped in SQL, the map is one
query over the chosen case's edges. Charts are SVG drawn here (no JavaScript).
"""

from __future__ import annotations

import datetime as dt
import math
import textwrap
from dataclasses import dataclass
from typing import Any

from django.contrib.admin.widgets import AutocompleteSelect
from django.core.exceptions import PermissionDenied
from django.db.models import Count, F, Q, Sum
from django.db.models.functions import TruncDate
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone

from graph_memory.adapter import case_firm_attname, case_model, firm_cases, get_adapter
from graph_memory.admin.display import case_labels, trigger_words
from graph_memory.admin.lint import lint_health
from graph_memory.admin.scoping import admin_firms
from graph_memory.ledger import served_ledger
from graph_memory.models import AICall, Edge, MissedChange, Node, RefreshRun, ServedRow
from graph_memory.plumbing.display import case_label, firm_timezone

NIGHTS = 14
KIND_COLOURS = {
    Node.Kind.CASE: "#417690",
    Node.Kind.LAWYER: "#79aec8",
    Node.Kind.CLIENT: "#5b8a3a",
    Node.Kind.COUNTERPARTY: "#ba2121",
}
KIND_ORDER = [Node.Kind.LAWYER, Node.Kind.CLIENT, Node.Kind.COUNTERPARTY, Node.Kind.CASE]
LABEL_MAX = 28


# The case in the centre is what the picture is about: its whole label, on up to three lines.
CENTRE_LINE_MAX, CENTRE_LINES = 34, 3
# Edge labels sit this far from the case towards the other end: at the midpoint, where
# the spokes converge, the labels of neighbouring spokes overlap.
EDGE_LABEL_AT = 0.62


def _short(label: str) -> str:
    return label if len(label) <= LABEL_MAX else label[: LABEL_MAX - 1] + "…"


def _lines(label: str, *, width: int, most: int) -> list[str]:
    lines = textwrap.wrap(label, width) or [""]
    if len(lines) > most:
        lines = [*lines[: most - 1], _short(" ".join(lines[most - 1 :]))]
    return lines


def _compact(value: int) -> str:
    if value >= 1_000_000:
        return f"{value / 1_000_000:.1f}M"
    if value >= 10_000:
        return f"{value / 1000:.0f}k"
    if value >= 1000:
        return f"{value / 1000:.1f}k"
    return str(value)


def night_window(*, tz: dt.tzinfo, now: dt.datetime) -> tuple[list[dt.date], dt.datetime]:
    """The last NIGHTS local dates (oldest first) and the instant the oldest began."""
    today = now.astimezone(tz).date()
    days = [today - dt.timedelta(days=offset) for offset in range(NIGHTS - 1, -1, -1)]
    return days, dt.datetime.combine(days[0], dt.time.min, tzinfo=tz)


def summary_counts(*, firm_id: int) -> dict[str, int]:
    """Cases of the firm by summary state, in one aggregate query."""
    firm_column = case_firm_attname()
    return case_model().objects.filter(**{firm_column: firm_id}).aggregate(
        cases=Count("pk"),
        stale=Count("pk", filter=Q(memory_summary__stale=True) & ~Q(memory_summary__text="")),
        failed=Count("pk", filter=Q(memory_summary__attempts__gt=0)),
        never=Count("pk", filter=Q(memory_summary__isnull=True) | Q(memory_summary__text="")),
    )


def last_run_per_night(*, firm_id: int, tz: dt.tzinfo, since: dt.datetime) -> list[RefreshRun]:
    """The latest refresh run of each local night since `since`, newest night first."""
    return list(
        RefreshRun.objects.filter(firm_id=firm_id, started_at__gte=since)
        .annotate(night=TruncDate("started_at", tzinfo=tz))
        .order_by("-night", "-started_at", "-id")
        .distinct("night")
    )


def abandoned_runs(*, firm_id: int, since: dt.datetime, limit: int = 10) -> list[RefreshRun]:
    """The firm's most recent runs since `since` whose worker died mid-run (status `abandoned`), newest first."""
    runs = RefreshRun.objects.filter(firm_id=firm_id, status=RefreshRun.Status.ABANDONED, started_at__gte=since)
    return list(runs.order_by("-started_at", "-id")[:limit])


MISSED_SHOWN = 5


def missed_changes(*, firm_id: int, since: dt.datetime, operator: bool) -> dict[str, Any]:
    """Host changes the memory failed to react to (refresh/missed.py): the firm's open and recent counts, and
    for an operator those no firm could be told for; then its latest open ones. Two queries."""
    scope = Q(firm_id=firm_id) | Q(firm_id__isnull=True) if operator else Q(firm_id=firm_id)
    open_ = Q(repaired_at__isnull=True)
    counts = MissedChange.objects.filter(scope).aggregate(
        open=Count("pk", filter=Q(firm_id=firm_id) & open_),
        recent=Count("pk", filter=Q(firm_id=firm_id, created_at__gte=since)),
        unattributed=Count("pk", filter=Q(firm_id__isnull=True) & open_),
    )
    latest = list(MissedChange.objects.filter(scope, open_).order_by("-created_at", "-id")[:MISSED_SHOWN])
    if latest:  # the cases by name, not their ids (one query)
        names = case_labels({c for change in latest for c in change.case_ids}, firm_ids={firm_id})
        for change in latest:
            change.case_names = [names.get(c, "another firm's case" if operator else "[deleted case]") for c in change.case_ids]
    return {**counts, "latest": latest}


def tokens_per_night(
    *, firm_id: int, tz: dt.tzinfo, days: list[dt.date], since: dt.datetime
) -> list[tuple[dt.date, int]]:
    """Model tokens (in + out, every call) per local night, zero-filled, oldest first."""
    rows = (
        AICall.objects.filter(firm_id=firm_id, created_at__gte=since)
        .annotate(night=TruncDate("created_at", tzinfo=tz))
        .values("night")
        .annotate(tokens=Sum(F("tokens_in") + F("tokens_out")))
        .order_by("night")
    )
    by_night = {row["night"]: row["tokens"] or 0 for row in rows}
    return [(day, by_night.get(day, 0)) for day in days]


@dataclass
class Bar:
    x: float
    y: float
    width: float
    height: float
    value_y: float
    label: str
    value: str
    title: str


def bar_chart(points: list[tuple[dt.date, int]], *, height: int = 160, step: int = 46) -> dict[str, Any]:
    """Geometry of a bar chart of (day, tokens); the template draws it as SVG."""
    top, bottom = 18, 22
    plot = height - top - bottom
    peak = max((value for _, value in points), default=0) or 1
    bars = []
    for index, (day, value) in enumerate(points):
        bar_height = round(plot * value / peak, 1)
        bars.append(
            Bar(
                x=index * step + 6,
                y=top + plot - bar_height,
                width=step - 12,
                height=bar_height,
                value_y=top + plot - bar_height - 4,
                label=day.strftime("%m-%d"),
                value=_compact(value),
                title=f"{day.isoformat()}: {value} tokens",
            )
        )
    return {
        "bars": bars,
        "total": sum(value for _, value in points),
        "width": len(points) * step,
        "height": height,
        "baseline": top + plot,
        "label_y": height - 6,
    }


@dataclass
class MapNode:
    x: float
    y: float
    kind: str
    colour: str
    label: str
    title: str
    radius: int
    lines: list[str]


@dataclass
class MapEdge:
    x1: float
    y1: float
    x2: float
    y2: float
    mx: float
    my: float
    label: str


def map_picture(edges: list[Edge], *, case_ref_id: int, width: int = 720, height: int = 440) -> dict[str, Any]:
    """Geometry of one case's connection map: the case in the centre, the rest on an ellipse."""
    nodes: dict[Any, Node] = {}
    for edge in edges:
        nodes[edge.source_id] = edge.source
        nodes[edge.target_id] = edge.target
    centre = next((n for n in nodes.values() if n.kind == Node.Kind.CASE and n.ref_id == case_ref_id), None)
    around = sorted(
        (n for n in nodes.values() if n is not centre),
        key=lambda n: (KIND_ORDER.index(n.kind) if n.kind in KIND_ORDER else 9, n.label, str(n.id)),
    )
    cx, cy = width / 2, height / 2
    rx, ry = width / 2 - 110, height / 2 - 50
    placed: dict[Any, MapNode] = {}
    if centre is not None:
        placed[centre.id] = MapNode(
            cx, cy, centre.kind, KIND_COLOURS[Node.Kind.CASE], centre.label, centre.label, 16,
            _lines(centre.label, width=CENTRE_LINE_MAX, most=CENTRE_LINES),
        )  # fmt: skip
    for index, node in enumerate(around):
        angle = -math.pi / 2 + 2 * math.pi * index / max(len(around), 1)
        x, y = round(cx + rx * math.cos(angle), 1), round(cy + ry * math.sin(angle), 1)
        placed[node.id] = MapNode(
            x, y, node.kind, KIND_COLOURS.get(node.kind, "#666"), _short(node.label), node.label, 10,
            _lines(node.label, width=LABEL_MAX, most=2),
        )  # fmt: skip
    lines = []
    for edge in edges:
        a, b = placed[edge.source_id], placed[edge.target_id]
        near, far = (b, a) if centre is not None and edge.target_id == centre.id else (a, b)
        lx = round(near.x + EDGE_LABEL_AT * (far.x - near.x), 1)
        ly = round(near.y + EDGE_LABEL_AT * (far.y - near.y), 1)
        lines.append(MapEdge(a.x, a.y, b.x, b.y, lx, ly, edge.get_kind_display()))
    legend = [(kind.label, KIND_COLOURS[kind]) for kind in (Node.Kind.CASE, *KIND_ORDER[:3])]
    return {"nodes": list(placed.values()), "edges": lines, "width": width, "height": height, "legend": legend}


def _chosen_case(raw: str | None, *, firm_id: int) -> Any | None:
    """The case asked for (the firm's first when none is), in one query; never all of the firm's cases."""
    cases = firm_cases(firm_id)
    if raw in (None, ""):
        return cases.order_by("pk").first()
    try:
        case_id = int(raw)
    except (TypeError, ValueError):
        raise Http404("No such case.") from None
    # Another firm's case and a case that never existed are the same 404.
    case = cases.filter(pk=case_id).first() if 0 < case_id < 2**63 else None
    if case is None:
        raise Http404("No such case.")
    return case


def case_picker(model_admin: Any) -> tuple[dict[str, Any], Any]:
    """The attributes and media of admin's autocomplete for the case (searched as the case admin
    searches, scoped like it); only the chosen case is rendered, whatever the firm's size."""
    field = model_admin.model._meta.get_field("case")
    widget = AutocompleteSelect(field, model_admin.admin_site)
    return widget.build_attrs(widget.attrs, {"id": "gm-case", "required": True}), widget.media


def _worded(runs: list[RefreshRun]) -> list[RefreshRun]:
    for run in runs:
        run.trigger_words = trigger_words(run.trigger)
    return runs


def health_view(request: HttpRequest, model_admin: Any) -> HttpResponse:
    """/admin/graph_memory/casesummary/health/: `?firm=<slug>` (operators) and `?case=<id>`."""
    firms = list(admin_firms(request.user))
    if not firms:
        raise PermissionDenied
    firm = firms[0]
    if request.user.is_superuser and request.GET.get("firm"):
        adapter = get_adapter()
        firm = next((f for f in firms if adapter.firm_slug(f) == request.GET["firm"]), None)
        if firm is None:
            raise Http404("No such firm.")
    tz = firm_timezone(firm)
    days, since = night_window(tz=tz, now=timezone.now())
    case = _chosen_case(request.GET.get("case"), firm_id=firm.pk)
    case_id = case.pk if case is not None else None
    picker_attrs, picker_media = case_picker(model_admin)
    edges = []
    if case_id is not None:
        # Ordered by kind only: the model's default ordering joins the host's case table.
        edges = list(
            Edge.objects.filter(firm_id=firm.pk, case_id=case_id)
            .select_related("source", "target")
            .order_by("kind", "pk")
        )
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.model._meta,
        "title": f"Memory health — {firm}",
        "firm": firm,
        "firm_tz": tz,
        # (slug, firm) pairs: the slug field is the host's (the adapter names it).
        "firms": [(get_adapter().firm_slug(f), f) for f in firms] if request.user.is_superuser else [],
        "firm_slug": get_adapter().firm_slug(firm),
        "counts": summary_counts(firm_id=firm.pk),
        "runs": _worded(last_run_per_night(firm_id=firm.pk, tz=tz, since=since)),
        "abandoned": _worded(abandoned_runs(firm_id=firm.pk, since=since)),
        "missed": missed_changes(firm_id=firm.pk, since=since, operator=request.user.is_superuser),
        "chart": bar_chart(tokens_per_night(firm_id=firm.pk, tz=tz, days=days, since=since)),
        "nights": NIGHTS,
        "case": case,
        "case_label": case_label(case) if case is not None else "",
        "picker_attrs": picker_attrs,
        "picker_media": picker_media,
        "map": map_picture(edges, case_ref_id=case_id) if edges and case_id is not None else None,
        "lint": lint_health(firm_id=firm.pk, firm_filter=request.user.is_superuser),
    }
    if case is not None and not request.user.is_superuser:
        # A case's map is memory content: its served-ledger row (issue 31), before the page is given.
        served_ledger.record(
            firm_id=firm.pk, viewer_id=request.user.pk, endpoint="admin:health", status=ServedRow.Status.OK,
            query={"method": request.method, "path": request.path, "query": sorted(request.GET.lists())},
            case_ids=[case.pk],
        )  # fmt: skip
    # The page is one firm's: every time on it (and the header's label) in that firm's zone.
    with timezone.override(tz):
        return TemplateResponse(request, "admin/graph_memory/health.html", context).render()

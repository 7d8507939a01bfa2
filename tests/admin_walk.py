"""Every admin page a user may open, named: the walk `tests/admin/test_walk.py` reads and `make screenshots` draws.

For each registered admin the user may view: its changelist, and for the first row they see (and for the
longest document) its change and history pages, and its delete page where they may delete; then every
app's index, the admin index and the custom pages (memory health, the access question asked both ways,
the served ledger's question). Names are file-name safe.
"""

from __future__ import annotations

import html
import re
from typing import Any

from django.contrib import admin
from django.db.models import F, Func, IntegerField
from django.test import RequestFactory
from django.urls import reverse


def _request(user: Any) -> Any:
    request = RequestFactory().get("/admin/")
    request.user = user
    return request


def _first(model_admin: Any, request: Any) -> Any:
    rows = model_admin.get_queryset(request)
    if model_admin.model._meta.label == "practice.Document":
        # The longest document is the page that must stay light (pages paginated).
        rows = rows.annotate(page_count=Func(F("pages"), 1, function="array_length", output_field=IntegerField())).order_by(
            F("page_count").desc(nulls_last=True)
        )
    else:
        rows = rows.order_by("pk")
    return rows.first()


def admin_pages(user: Any) -> list[tuple[str, str]]:
    """(name, url) of every admin page `user` may open, in a stable order."""
    request = _request(user)
    pages: list[tuple[str, str]] = [("index", reverse("admin:index"))]
    apps: set[str] = set()
    for model, model_admin in sorted(admin.site._registry.items(), key=lambda item: item[0]._meta.label):
        if not model_admin.has_view_permission(request):
            continue
        opts = model._meta
        base = f"{opts.app_label}_{opts.model_name}"
        apps.add(opts.app_label)
        pages.append((f"{base}-list", reverse(f"admin:{base}_changelist")))
        if model_admin.has_add_permission(request):
            pages.append((f"{base}-add", reverse(f"admin:{base}_add")))
        row = _first(model_admin, request)
        if row is None:
            continue
        pages.append((f"{base}-change", reverse(f"admin:{base}_change", args=[row.pk])))
        pages.append((f"{base}-history", reverse(f"admin:{base}_history", args=[row.pk])))
        if model_admin.has_delete_permission(request, row):
            pages.append((f"{base}-delete", reverse(f"admin:{base}_delete", args=[row.pk])))
    pages += [(f"app-{label}", reverse("admin:app_list", args=[label])) for label in sorted(apps)]
    pages += _custom_pages(request)
    return pages


def _custom_pages(request: Any) -> list[tuple[str, str]]:
    from graph_memory.admin.scoping import admin_firms
    from graph_memory.models import CaseSummary

    firm = admin_firms(request.user).first()
    if firm is None:
        return []
    summary = CaseSummary.objects.filter(firm_id=firm.pk).exclude(text="").order_by("pk").first()
    question = reverse("admin:graph_memory_access_question")
    pages = [("health", reverse("admin:graph_memory_health")), ("access-question", question)]
    if summary is not None:
        pages.append(("health-case", f"{reverse('admin:graph_memory_health')}?case={summary.case_id}"))
        pages.append(("access-question-case", f"{question}?case={summary.case_id}"))
    pages.append(("access-question-user", f"{question}?user={request.user.get_username()}"))
    served = reverse("admin:graph_memory_servedrow_changelist")
    pages.append(("served-question", f"{served}?viewer={request.user.pk}&since=2000-01-01"))
    return pages


# --- what no page may show a firm admin ---------------------------------------------------------

# A time as the firm admin reads it: "2026-12-01 03:31 EST" (or "03:31 EST" beside a date).
LABELLED_TIME = re.compile(r"\b\d{1,2}:\d\d(:\d\d)? (E[SD]T)\b")
UNLABELLED_TIME = [
    re.compile(r"\b\d{1,2}:\d\d (a\.m\.|p\.m\.)|\b(noon|midnight)\b"),  # Django's "Dec. 1, 2026, 9:29 p.m."
    re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d"),  # ISO, with or without an offset
    re.compile(r"\b\d{1,2}:\d\d(:\d\d)?(?! ?(E[SD]T|UTC)\b)(?![\d:])"),  # a clock time with no zone after it
]
RAW_JSON = re.compile(r"[\[{]\s*[\"'][^\"']*[\"']\s*[:,\]}]|\[\s*\{|\{\s*\}|\[\s*\]")
# "firm 1", "Viewer id: 5", "case #3"; never a case's reference ("Case 2026-014") or a year.
BARE_ID = re.compile(r"\b(firm|viewer|user|question|run|node)( id)?:? #?\d+\b(?![-/])|\bcase( id)?:? #?\d{1,3}\b(?![-/])",
                     re.IGNORECASE)  # fmt: skip
# Codes shown as they are stored (lint codes and kinds, run triggers, document routers, endpoints).
CODES = re.compile(r"\b(client_and_counterparty|no_embedding|party_hygiene|search_gap|map_drift|crossing_note|"
                   r"instruction_like|deadline_done|admin:[a-z]+|api:[A-Za-z]+)\b")  # fmt: skip


def visible_text(page: str) -> str:
    """What a reader sees of an admin page: the text of its body, without scripts, styles, attributes and the
    hidden parts of admin's own widgets (its date-hierarchy and the theme toggle's labels are text too)."""
    body = page.split("<body", 1)[-1]
    body = re.sub(r"<(script|style|template)\b.*?</\1>", " ", body, flags=re.S)
    body = re.sub(r"<[^>]+>", " ", body)
    return re.sub(r"\s+", " ", html.unescape(body))


def page_problems(page: str, *, zone: str) -> list[str]:
    """What is wrong with a firm admin's admin page: each problem with the text around it."""
    problems = []
    if f'id="gm-time-zone">Times in {zone}.' not in page:
        problems.append(f"the header does not say the times are in {zone}")
    text = visible_text(page)
    title = re.search(r"<title>(.*?)</title>", page, re.S)
    checked = [("text", text), ("title", html.unescape(title.group(1)) if title else "")]
    for where, words in checked:
        for pattern in UNLABELLED_TIME:
            for found in pattern.finditer(LABELLED_TIME.sub("", words)):
                problems.append(f"{where}: an unlabelled time: …{words_around(words, found.group(0))}…")
        for name, pattern in (("raw JSON", RAW_JSON), ("a bare id", BARE_ID), ("a stored code", CODES)):
            for found in pattern.finditer(words):
                problems.append(f"{where}: {name}: …{words_around(words, found.group(0))}…")
    return problems


def words_around(text: str, found: str) -> str:
    at = text.find(found)
    return text[max(at - 60, 0) : at + len(found) + 60]

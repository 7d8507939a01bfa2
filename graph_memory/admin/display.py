"""What admin pages show of the memory's rows: times in the firm's zone, reports as tables, the admin log.

Kept apart from admin.py so each admin class stays a short list of columns
and fields; everything here is presentation or bookkeeping, no service logic.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from django.contrib import admin
from django.contrib.admin.models import CHANGE, LogEntry
from django.http import HttpRequest
from django.utils.dateparse import parse_datetime
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import ngettext

from graph_memory.adapter import case_firm_attname, case_model, get_adapter
from graph_memory.plumbing.display import page_time

# Verification reasons as a firm admin reads them (verify.py's REASONS, in words).
REASON_WORDS = {
    # summary-v3: a writer's selection (summaries/verify.py)
    "unknown_id": "a sentence id the slice does not have",
    "repeated_id": "a sentence selected twice",
    "no_known_sentence": "a point with no known sentence",
    "shortening_refused": "a shortening refused (the whole sentence was served)",
    "label_dropped": "a label that stated something (dropped, the point kept)",
    "section_moved": "a point under a heading its sentences do not bear out (served under recent activity)",
    # summary-v2 reports, still stored for older versions
    "empty": "empty",
    "too_long": "too long",
    "contentless": "says nothing",
    "no_sources": "cites no record",
    "unknown_source": "cites a record not in the slice",
    "no_quote": "no quote",
    "quote_too_long": "quote too long",
    "quote_not_in_source": "quote not in the cited record",
    "unsupported_date": "a date the quote does not give",
    "unsupported_amount": "an amount the quote does not give",
    "unsupported_percentage": "a percentage the quote does not give",
    "unsupported_identifier": "an identifier the quote does not give",
    "unsupported_number": "a number the quote does not give",
    "unsupported_state": "a state (paid, signed …) the quote does not give",
    "unsupported_negation": "a negation the quote does not give",
    "wrong_role": "a party in the wrong role",
    "unknown_name": "a name that is neither quoted nor a party",
    "name_not_in_quote": "a name the quote does not give",
    "uncovered": "too little of it comes from the quote",
    "duplicate": "a duplicate",
}


# What started a refresh or lint run (`trigger`), as people say it.
TRIGGER_WORDS = {
    "nightly": "the nightly run",
    "weekly": "the weekly run",
    "command": "a command (manage.py)",
    "admin": "admin",
    "on_demand": "a request (on demand)",
}


def trigger_words(trigger: str) -> str:
    return TRIGGER_WORDS.get(trigger, trigger.replace("_", " "))


def worded_filter(field: str, title: str, words: Callable[[str], str]) -> type[admin.SimpleListFilter]:
    """A list filter on a plain text column whose values are codes: each value offered in words."""

    class WordedFilter(admin.SimpleListFilter):
        parameter_name = field

        def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
            values = model_admin.get_queryset(request).order_by(field).values_list(field, flat=True).distinct()
            return [(value, words(value)) for value in values]

        def queryset(self, request: HttpRequest, queryset: Any) -> Any:
            return queryset.filter(**{field: self.value()}) if self.value() else queryset

    WordedFilter.title = title
    return WordedFilter


# A rewrite attempt (CaseSummary.last_attempt, summaries/service.py) and its regression guard's figures.
ATTEMPT_WORDS = {
    "at": "when",
    "outcome": "outcome",
    "reason": "why",
    "writer": "writer",
    "model": "model",
    "calls": "model calls",
    "modes": "request formats",
    "tokens_in": "tokens in",
    "tokens_out": "tokens out",
    "tokens_estimated": "tokens estimated",
    "latency_ms": "model time (ms)",
    "server_errors": "server errors",
    "guard": "regression guard",
    "ids": "sentence ids selected",
    "ids_known": "of them in the case's records",
    "kept_rate": "share in the records",
    "min_kept_rate": "least share accepted",
    "min_share": "least share of the current summary kept",
    "current_statements": "statements in the current summary",
    "current_sentences": "sentences in the current summary",
    "current_records": "records the current summary cites",
    "new_sentences": "sentences in the new summary",
    "new_records": "records the new summary cites",
    "current_field_records": "records behind the current field statements",
    "field_records_kept": "of them still stated",
}


def attempt_table(attempt: dict[str, Any]) -> SafeString | str:
    """The last rewrite attempt as a firm admin reads it: its facts, its verification report, the guard's figures."""
    if not attempt:
        return "No attempt recorded."
    facts = {key: value for key, value in attempt.items() if key != "verification"}
    verification = attempt.get("verification")
    return format_html(
        "{}{}",
        fact_table(facts, labels=ATTEMPT_WORDS),
        format_html("<p><strong>Its verification report</strong></p>{}", verification_table(verification))
        if verification
        else "",
    )


def time_column(field: str, description: str) -> Callable[[Any, Any], str]:
    """A list/detail column showing `obj.<field>` in the page's time zone, with the zone's name."""

    @admin.display(description=description, ordering=field)
    def column(model_admin: Any, obj: Any) -> str:
        return page_time(getattr(obj, field))

    column.__name__ = f"{field}_local"
    return column


def case_labels(case_ids: Iterable[int], *, firm_ids: Iterable[int]) -> dict[int, str]:
    """The names of these cases of these firms (one query): what a page shows instead of case ids."""
    case_ids, firm_ids = set(case_ids) - {None}, set(firm_ids) - {None}
    if not case_ids or not firm_ids:
        return {}
    cases = case_model()._default_manager.filter(pk__in=case_ids, **{f"{case_firm_attname()}__in": firm_ids})
    adapter = get_adapter()
    return {case.pk: adapter.case_label(case) for case in cases}


def log_admin_action(request: HttpRequest, objects: Iterable[Any], message: str) -> None:
    """Record an admin action on each of `objects` in Django's admin log (each object's History).

    One INSERT for all of them; the message is shown as written.
    """
    LogEntry.objects.log_actions(
        user_id=request.user.pk, queryset=list(objects), action_flag=CHANGE, change_message=message
    )


def verification_table(report: dict[str, Any]) -> SafeString | str:
    """A stored verification report as a firm admin reads it: the counts, then each dropped statement."""
    if not report:
        return "—"
    counts = report.get("counts", {})
    kept = report.get("kept", counts.get("kept", 0))
    dropped = report.get("dropped", [])
    summary = format_html(
        "<p>Selected statements kept: <strong>{}</strong> · dropped or refused: <strong>{}</strong>{}</p>",
        kept,
        len(dropped),
        format_html(" · field statements (rendered from the records): <strong>{}</strong>", report["fields"])
        if "fields" in report
        else "",
    )
    if not dropped:
        return format_html("{}<p>Nothing was dropped.</p>", summary)
    rows = format_html_join(
        "",
        "<tr><td>{}</td><td>{}</td><td>{}</td><td style='white-space: pre-wrap'>{}</td></tr>",
        (
            (
                entry.get("section", "—"),
                REASON_WORDS.get(entry.get("reason", ""), entry.get("reason", "—")),
                entry.get("detail", "") or "—",
                entry.get("text") or entry.get("label") or entry.get("id", ""),
            )
            for entry in dropped
        ),
    )
    return format_html(
        "{}<table class='gm-verification'><thead><tr><th>section</th><th>dropped because</th><th>detail</th>"
        "<th>text, label or id</th></tr></thead><tbody>{}</tbody></table>",
        summary,
        rows,
    )


def source_list(source_ids: list[str], *, urls: dict[str, str]) -> SafeString | str:
    """The records a summary cites, each linked to its record's admin page when the host has one."""
    if not source_ids:
        return "—"
    return format_html(
        "<ul class='gm-sources'>{}</ul>",
        format_html_join(
            "",
            "<li>{}</li>",
            (
                (format_html('<a href="{}">{}</a>', urls[sid], sid) if sid in urls else sid,)
                for sid in source_ids
            ),
        ),
    )


def _words(key: str, labels: Mapping[str, str]) -> str:
    return labels.get(key) or key.replace("_", " ")


def fact_value(value: Any, *, labels: Mapping[str, str] = {}) -> SafeString | str:
    """One stored value as people read it: a time labelled in the page's zone, yes / no, a list as a list,
    an object as a small table of plain labels (`labels` names keys; otherwise a key's words)."""
    if value is None or value == "" or value == [] or value == {}:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        moment = parse_datetime(value) if len(value) >= 19 and value[4:5] == "-" and "T" in value else None
        return page_time(moment) if isinstance(moment, dt.datetime) and moment.tzinfo else value
    if isinstance(value, Mapping):
        return fact_table(value, labels=labels)
    if isinstance(value, list | tuple):
        if all(isinstance(item, Mapping) for item in value):
            return rows_table(value, labels=labels)
        # One item a line (admin's styles indent a list inside a table cell past its column).
        return format_html_join(mark_safe("<br>"), "{}", ((fact_value(item, labels=labels),) for item in value))
    return str(value)


def fact_table(facts: Mapping[str, Any], *, labels: Mapping[str, str] = {}) -> SafeString | str:
    """An object (a JSON field) as a table of plain labels and values, never as JSON."""
    if not facts:
        return "—"
    # The keys `labels` names first, in its order (a JSON column keeps them sorted by length).
    order = {key: at for at, key in enumerate(labels)}
    keys = sorted(facts, key=lambda key: (order.get(key, len(order)), key))
    rows = format_html_join(
        "", "<tr><th scope='row'>{}</th><td>{}</td></tr>",
        ((_words(key, labels), fact_value(facts[key], labels=labels)) for key in keys),
    )  # fmt: skip
    return format_html("<table class='gm-facts'><tbody>{}</tbody></table>", rows)


def rows_table(rows: Iterable[Mapping[str, Any]], *, labels: Mapping[str, str] = {}) -> SafeString | str:
    """A list of objects as one table: a column per key (in the order first seen), a row per object."""
    rows = list(rows)
    columns = list(dict.fromkeys(key for row in rows for key in row))
    if not rows:
        return "—"
    head = format_html_join("", "<th scope='col'>{}</th>", ((_words(key, labels),) for key in columns))
    body = format_html_join(
        "", "<tr>{}</tr>",
        ((format_html_join("", "<td>{}</td>", ((fact_value(row.get(key), labels=labels),) for key in columns)),)
         for row in rows),
    )  # fmt: skip
    return format_html("<table class='gm-facts'><thead><tr>{}</tr></thead><tbody>{}</tbody></table>", head, body)


def operator_details(value: Any) -> SafeString:
    """The stored value as it is, folded away: for operators (a firm admin's page leaves it out)."""
    raw = json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)
    return format_html("<details class='gm-raw'><summary>details (as stored)</summary><pre>{}</pre></details>", raw)


def counted(count: int, singular: str, plural: str) -> str:
    """"1 case summary", "2 case summaries": a count with its noun (admin's messages)."""
    return f"{count} {ngettext(singular, plural, count)}"

"""What admin pages show of the memory's rows: times in the firm's zone, reports as tables, the admin log.

Kept apart from admin.py so each admin class stays a short list of columns
and fields; everything here is presentation or bookkeeping, no service logic.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from django.contrib import admin
from django.contrib.admin.models import CHANGE, LogEntry
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

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


def time_column(field: str, description: str) -> Callable[[Any, Any], str]:
    """A list/detail column showing `obj.<field>` in the page's time zone, with the zone's name."""

    @admin.display(description=description, ordering=field)
    def column(model_admin: Any, obj: Any) -> str:
        return page_time(getattr(obj, field))

    column.__name__ = f"{field}_local"
    return column


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

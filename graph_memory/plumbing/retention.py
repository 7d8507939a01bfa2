"""What a deleted case leaves behind outside the memory's own tables: Django admin's log.

Admin writes a LogEntry for every add, change and deletion, holding the
object's text as it was (`object_repr`: a case's number and title) and what
changed (`change_message`, which names inline rows such as team members).
Deleting the case deletes every derived row of the memory; this removes that
text too, so a deleted case's title is not kept, nor shown under "Recent
actions". The same holds for every host record the memory watches (the case's
documents, drafts, deadlines, invoices, notes, team and party links, clients
and counterparties: `adapter.changes()`), whether it goes with its case or
alone. The entries themselves stay: who did what, when, to which id.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.apps import apps
from django.db.models import Model


def admin_log_redact(*, model: type[Model], object_ids: Iterable[object]) -> int:
    """Blank the text of the admin-log entries of these objects; returns how many entries were rewritten.

    Keeps action, object id, content type, user and time. Runs in the
    caller's transaction (the deletion's own), so it rolls back with it. A
    host without django.contrib.admin has no log: nothing to do.
    """
    if not apps.is_installed("django.contrib.admin"):
        return 0
    from django.contrib.admin.models import LogEntry  # only importable with admin installed
    from django.contrib.contenttypes.models import ContentType

    content_type = ContentType.objects.get_for_model(model, for_concrete_model=False)
    redacted = f"[deleted {model._meta.verbose_name}]"[: LogEntry._meta.get_field("object_repr").max_length]
    return (
        LogEntry.objects.filter(content_type=content_type, object_id__in=[str(pk) for pk in object_ids])
        .exclude(object_repr=redacted, change_message="")
        .update(object_repr=redacted, change_message="")
    )

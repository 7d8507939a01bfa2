"""The access ledger: every change to an input of the wall, appended, never edited (issue 31, item 2).

The wall (`graph_memory.wall.access`) lets a viewer open a case when they are an
active user of its firm and they are its firm's admin, hold a grant to it, or
are in a group that holds one. Each row here records one change to one of
those inputs, at the time of its transaction (`now()`):

- `case`: the case belongs to the firm from now (created, moved in, baseline) or
  no longer (deleted, moved out). Reason `consent` is memory consent
  (`graph_memory.consent`): a case excluded from the memory is an ended
  `case` row with that reason, re-included a granted one, so nobody may open
  its memory in between without any other change here;
- `owner`: the viewer owns the case (from the case's owner column, when the
  adapter names one): it says why a grant to the user stands, nothing more;
- `user_grant` / `group_grant`: django-guardian's grant of the case to the
  viewer, or to the group;
- `membership`: the viewer is in the group (its firm: the viewer's, as the
  ledger last recorded it);
- `firm_admin`: the viewer is an admin of the firm (every case of it: `case_id`
  is empty);
- `user`: the viewer is an active user of the firm (deactivated, reactivated,
  moved, deleted).

Rows keep ids, never a name, a title or any text of a case: a deleted case
keeps its rows and nothing of it is left to redact (admin shows it as
"[deleted case]"). Plain integer columns, no foreign keys, so nothing the host
deletes takes a row with it. `graph_memory.ledger.history` answers who could
open a case, or which cases a user could open, at a time or over a range, by
replaying the firm's rows.
"""

from __future__ import annotations

from django.db import models

from graph_memory.models.choices import TextChoices
from graph_memory.plumbing.display import page_time


class TransactionNow(models.Func):
    """`now()`: the transaction's start, as the triggers write it (Django's `Now` is the statement's)."""

    template = "now()"
    output_field = models.DateTimeField()


class AccessChange(models.Model):
    class Kind(TextChoices):
        CASE = "case", "Case of the firm"
        OWNER = "owner", "Owner of the case"
        USER_GRANT = "user_grant", "Grant to the user"
        GROUP_GRANT = "group_grant", "Grant to a group"
        MEMBERSHIP = "membership", "Member of a group"
        FIRM_ADMIN = "firm_admin", "Firm admin"
        USER = "user", "Active user of the firm"

    class Reason(TextChoices):
        BASELINE = "baseline", "Standing when the ledger was installed"
        GRANTED = "granted", "Granted"
        REVOKED = "revoked", "Revoked"
        JOINED = "joined", "Joined the group"
        LEFT = "left", "Left the group"
        CREATED = "created", "Created"
        DELETED = "deleted", "Deleted"
        MOVED = "moved", "Moved to another firm"
        DEACTIVATED = "deactivated", "Deactivated"
        REACTIVATED = "reactivated", "Reactivated"
        CONSENT = "consent", "Memory consent"

    at = models.DateTimeField(db_default=TransactionNow(), help_text="The time of the change's transaction.")
    # Empty only for a group membership of a user the ledger knows no firm of (made by raw SQL).
    firm_id = models.BigIntegerField(null=True)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    granted = models.BooleanField(help_text="True: holds from this time; False: ended at this time.")
    reason = models.CharField(max_length=16, choices=Reason.choices)
    case_id = models.BigIntegerField(null=True, help_text="Empty: not about one case (a user, a membership).")
    viewer_id = models.BigIntegerField(null=True, help_text="The user; empty for a case or a group's grant.")
    group_id = models.BigIntegerField(null=True, help_text="The group of a group grant or membership.")

    class Meta:
        verbose_name = "access change"
        ordering = ["-at", "-id"]
        indexes = [
            models.Index(fields=["firm_id", "case_id", "at"], name="gm_ledger_case"),
            models.Index(fields=["firm_id", "viewer_id", "at"], name="gm_ledger_viewer"),
            models.Index(fields=["firm_id", "group_id", "at"], name="gm_ledger_group"),
            models.Index(fields=["firm_id", "kind", "at"], name="gm_ledger_kind"),
            models.Index(fields=["firm_id", "at"], name="gm_ledger_firm_at"),
            # The triggers' one lookup: the firm a user was last recorded in (a membership's firm).
            models.Index(fields=["viewer_id", "kind", "id"], name="gm_ledger_viewer_last"),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {'granted' if self.granted else 'ended'} at {page_time(self.at)}"

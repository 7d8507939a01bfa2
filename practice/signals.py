"""Receivers that keep case permissions in step with owner and team."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.db.models.signals import m2m_changed, post_delete, post_save
from django.dispatch import receiver

from accounts.models import Firm
from practice.models import Case, CaseTeamMember
from practice.permissions import case_sync_view_permissions


@receiver(post_save, sender=Case, dispatch_uid="practice.case_saved_sync_permissions")
def case_saved(sender: type[Case], instance: Case, **kwargs: Any) -> None:
    case_sync_view_permissions(case_id=instance.pk)


@receiver(post_save, sender=CaseTeamMember, dispatch_uid="practice.team_member_saved")
@receiver(post_delete, sender=CaseTeamMember, dispatch_uid="practice.team_member_deleted")
def team_member_changed(sender: type[CaseTeamMember], instance: CaseTeamMember, origin: Any = None, **kwargs: Any) -> None:
    # A case (or firm) being deleted loses its team rows first, while the case
    # row still exists: re-granting `view_case` then would insert permission
    # rows pointing at a case about to vanish, and the commit would fail.
    if origin is not None and (origin.model if isinstance(origin, QuerySet) else type(origin)) in (Case, Firm):
        return
    case_sync_view_permissions(case_id=instance.case_id)


@receiver(m2m_changed, sender=Case.team.through, dispatch_uid="practice.team_changed")
def team_changed(sender: Any, instance: Any, action: str, reverse: bool, pk_set: set[int] | None, **kwargs: Any) -> None:
    if action not in {"post_add", "post_remove", "post_clear"}:
        return
    if not reverse:
        case_sync_view_permissions(case_id=instance.pk)
    elif pk_set:
        for case_id in pk_set:
            case_sync_view_permissions(case_id=case_id)
    else:
        # user.team_cases.clear(): the cases are gone from the through table
        # already, so resync every case that still grants this user access.
        for case_id in Case.objects.filter(caseuserobjectpermission__user=instance).values_list("pk", flat=True):
            case_sync_view_permissions(case_id=case_id)

"""Keeps django-guardian's `view_case` rows equal to owner + team.

Called from the signal receivers in `practice.signals` inside the transaction
of the change that triggered it, so a revocation is never deferred: the
moment the team change commits, the permission is gone with it.
"""

from __future__ import annotations

from django.contrib.auth.models import Permission
from django.db import transaction

from practice.models import Case, CaseTeamMember, CaseUserObjectPermission


def view_case_permission() -> Permission:
    return Permission.objects.get(content_type__app_label="practice", codename="view_case")


def case_sync_view_permissions(*, case_id: int) -> None:
    """Grant `view_case` to the case's owner and team, and revoke it from everyone else."""
    with transaction.atomic():
        case = Case.objects.select_for_update().filter(pk=case_id).only("id", "owner_id").first()
        if case is None:
            return
        permission = view_case_permission()
        wanted = set(CaseTeamMember.objects.filter(case_id=case_id).values_list("user_id", flat=True))
        wanted.add(case.owner_id)
        CaseUserObjectPermission.objects.filter(content_object_id=case_id, permission=permission).exclude(
            user_id__in=wanted
        ).delete()
        CaseUserObjectPermission.objects.bulk_create(
            [CaseUserObjectPermission(content_object_id=case_id, permission=permission, user_id=u) for u in wanted],
            ignore_conflicts=True,
        )

"""The ledger's first rows: the access that stands when it is installed (reason `baseline`).

Written once, when the ledger is empty, by the same post-migrate step that
installs the triggers, in the same transaction, with the table locked so two
migrates cannot both write it. From then on the triggers and signals append
every change, so a point-in-time answer for any moment after the baseline is
complete; before it the ledger knows nothing and says so (`history.py`).
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import DEFAULT_DB_ALIAS, connections, transaction

from graph_memory.adapter import get_adapter
from graph_memory.ledger.triggers import COLUMNS, LEDGER, _case_columns, _q, standing_grants_sql
from graph_memory.ledger.users import now_of
from graph_memory.models import AccessChange

K, R = AccessChange.Kind, AccessChange.Reason
BATCH = 2000


def seed(using: str = DEFAULT_DB_ALIAS) -> int:
    """Write the baseline if the ledger has no row yet; returns how many rows (0: it had rows)."""
    with transaction.atomic(using=using), connections[using].cursor() as cursor:
        cursor.execute(f"LOCK TABLE {LEDGER} IN SHARE ROW EXCLUSIVE MODE")
        cursor.execute(f"SELECT EXISTS (SELECT 1 FROM {LEDGER})")
        if cursor.fetchone()[0]:
            return 0
        # Users first: a membership's firm is the user's, read from these rows.
        rows: list[AccessChange] = []
        written = 0
        for user in get_user_model()._default_manager.using(using).order_by("pk").iterator(chunk_size=BATCH):
            firm_id, active, admin = now_of(user)
            if firm_id is None:
                continue
            rows.append(
                AccessChange(firm_id=firm_id, kind=K.USER, granted=active, reason=R.BASELINE, viewer_id=user.pk)
            )
            if admin:
                rows.append(AccessChange(firm_id=firm_id, kind=K.FIRM_ADMIN, granted=True, reason=R.BASELINE,
                                         viewer_id=user.pk))  # fmt: skip
            if len(rows) >= BATCH:
                written += len(AccessChange.objects.using(using).bulk_create(rows))
                rows = []
        written += len(AccessChange.objects.using(using).bulk_create(rows))
        table, pk, firm, owner = _case_columns()
        cases = f"(SELECT c.{pk} AS c, c.{firm} AS firm FROM {table} c) m"
        selects = [
            f"SELECT now(), m.firm, '{K.CASE}', true, '{R.BASELINE}', m.c, NULL::bigint, NULL::bigint FROM {cases}"
        ]
        if owner:
            selects.append(
                f"SELECT now(), c.{firm}, '{K.OWNER}', true, '{R.BASELINE}', c.{pk}, c.{owner}::bigint, NULL "
                f"FROM {table} c WHERE c.{owner} IS NOT NULL"
            )
        selects += standing_grants_sql(cases, firm="m.firm", reason=R.BASELINE)
        permissions = get_adapter().guardian_permissions()
        if permissions is not None and permissions.group_model is not None:
            field = get_user_model()._meta.get_field("groups")
            through = _q(field.remote_field.through._meta.db_table)
            selects.append(
                f"SELECT now(), u.firm_id, '{K.MEMBERSHIP}', true, '{R.BASELINE}', NULL, ug.{_q(field.m2m_column_name())}, "
                f"ug.{_q(field.m2m_reverse_name())} FROM {through} ug JOIN {LEDGER} u ON u.kind = '{K.USER}' "
                f"AND u.viewer_id = ug.{_q(field.m2m_column_name())}"
            )
        cursor.execute(f"INSERT INTO {LEDGER} {COLUMNS} {' UNION ALL '.join(selects)}")
        return written + cursor.rowcount

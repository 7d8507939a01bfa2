"""Composite foreign keys on (id, firm_id): a row can only point at rows of its own firm.

Django has no composite foreign keys, so this is SQL. The referenced tables
get a UNIQUE (id, firm_id) to point at. The checks are immediate, so the
statement that would cross firms fails, not a later commit.
"""

from __future__ import annotations

from django.db import migrations

TARGETS = ["accounts_user", "practice_client", "practice_counterparty", "practice_case"]

# (table, column, referenced table)
LINKS = [
    ("practice_case", "client_id", "practice_client"),
    ("practice_case", "owner_id", "accounts_user"),
    ("practice_casecounterparty", "case_id", "practice_case"),
    ("practice_casecounterparty", "counterparty_id", "practice_counterparty"),
    ("practice_caseteammember", "case_id", "practice_case"),
    ("practice_caseteammember", "user_id", "accounts_user"),
    ("practice_document", "case_id", "practice_case"),
    ("practice_draft", "case_id", "practice_case"),
    ("practice_deadline", "case_id", "practice_case"),
    ("practice_invoice", "case_id", "practice_case"),
    ("practice_note", "case_id", "practice_case"),
    ("practice_note", "author_id", "accounts_user"),
]


def _forward() -> list[str]:
    sql = [f"ALTER TABLE {t} ADD CONSTRAINT {t}_id_firm_uniq UNIQUE (id, firm_id)" for t in TARGETS]
    for table, column, target in LINKS:
        sql.append(
            f"ALTER TABLE {table} ADD CONSTRAINT {table}_{column}_same_firm "
            f"FOREIGN KEY ({column}, firm_id) REFERENCES {target} (id, firm_id)"
        )
    return sql


def _backward() -> list[str]:
    sql = [f"ALTER TABLE {table} DROP CONSTRAINT {table}_{column}_same_firm" for table, column, _ in LINKS]
    sql += [f"ALTER TABLE {t} DROP CONSTRAINT {t}_id_firm_uniq" for t in TARGETS]
    return sql


class Migration(migrations.Migration):
    dependencies = [("practice", "0001_initial"), ("accounts", "0001_initial")]
    operations = [migrations.RunSQL(_forward(), _backward())]

# Issue 14 (search path as fast as the fastest peer): summary vectors are kept in the row.
#
# pgvector's `vector` type is stored EXTERNAL: a summary row (text, tsvector, vector) is past the
# 2 kB TOAST threshold, so every vector went out of line and the exact scan paid a TOAST index probe
# and a second page per visible case (measured: 3 of its 5 ms at 1,000 visible cases). MAIN keeps the
# vector in the heap row (the compressible text and tsvector go to TOAST instead) and still lets a
# vector too large for a page move out as a last resort. Existing vectors are rewritten so that they
# move back in (an unchanged TOAST pointer would stay where it is).

from django.db import migrations

TABLE = "graph_memory_casesummary"  # a migration names the table as it was then, not through the model


class Migration(migrations.Migration):
    dependencies = [("graph_memory", "0010_admin_polish")]

    operations = [
        migrations.RunSQL(
            sql=[
                f"ALTER TABLE {TABLE} ALTER COLUMN embedding SET STORAGE MAIN",
                f"UPDATE {TABLE} SET embedding = embedding::real[]::vector WHERE embedding IS NOT NULL",
            ],
            reverse_sql=[f"ALTER TABLE {TABLE} ALTER COLUMN embedding SET STORAGE EXTERNAL"],
        ),
    ]

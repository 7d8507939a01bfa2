# The conflict check's candidate index (issue 14): for every client and counterparty, the
# deletion neighbourhoods of its name's words (graph_memory/map/names.py, `party_variants`, is the
# same rule in Python), as a generated column with a GIN index. Plain SQL and plpgsql-free:
# no pg_trgm or other extension needed. A stored column rather than an index on the
# expression: the planner may then filter rows by it cheaply whatever plan it picks (the
# function takes a fraction of a millisecond per row), and ANALYZE keeps statistics of its
# elements. fastupdate off: a pending list of unsorted entries would have every check scan
# it until the next vacuum. Django does not manage the column (see models/graph.py).

from django.db import migrations

from graph_memory import conf

PARTY_VARIANTS_SQL = r"""
CREATE OR REPLACE FUNCTION graph_memory_party_variants(firm bigint, party_key text, lookup_key text) RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    WITH words AS (
        SELECT w, n FROM unnest(string_to_array(party_key, ' ')) WITH ORDINALITY AS t(w, n) WHERE w <> ''
    ),
    whole AS (
        SELECT w, n FROM unnest(string_to_array(lookup_key, ' ')) WITH ORDINALITY AS t(w, n)
        WHERE w <> '' AND party_key <> ''
    ),
    units AS (
        SELECT CASE WHEN length(w) = 1 THEN '^' || w ELSE w END AS u, greatest(0, least(2, length(w) - 1)) AS k FROM words
        UNION ALL
        SELECT a.w || b.w, 1 FROM whole a JOIN whole b ON b.n = a.n + 1
    ),
    one AS (
        SELECT k, overlay(u PLACING '' FROM i FOR 1) AS v FROM units, generate_series(1, length(u)) AS i WHERE k >= 1
    ),
    two AS (
        SELECT overlay(v PLACING '' FROM j FOR 1) AS v FROM one, generate_series(1, length(v)) AS j WHERE k >= 2
    )
    SELECT coalesce(array_agg(DISTINCT firm::text || ':' || v), '{}')
    FROM (SELECT u FROM units UNION ALL SELECT v FROM one UNION ALL SELECT v FROM two) AS variants(v)
$$;
"""


class Migration(migrations.Migration):

    dependencies = [
        migrations.swappable_dependency(conf.firm_model_label()),
        ("graph_memory", "0004_writer_attempts"),
    ]

    operations = [
        migrations.RunSQL(PARTY_VARIANTS_SQL, reverse_sql="DROP FUNCTION graph_memory_party_variants(bigint, text, text)"),
        migrations.RunSQL(
            "ALTER TABLE graph_memory_node ADD COLUMN party_variants text[] GENERATED ALWAYS AS "
            "(graph_memory_party_variants(firm_id, party_key, name_key)) STORED",
            reverse_sql="ALTER TABLE graph_memory_node DROP COLUMN party_variants",
        ),
        migrations.RunSQL(
            "CREATE INDEX gm_node_party_variants ON graph_memory_node USING gin (party_variants) WITH (fastupdate = off)",
            reverse_sql="DROP INDEX gm_node_party_variants",
        ),
    ]

# The conflict check's candidate index (issue 14): for every client and counterparty, the
# deletion neighbourhoods of its name's words (graph_memory/names.py, `party_variants`,
# is the same rule in Python), GIN-indexed. Plain SQL: no pg_trgm or other extension needed.

import django.contrib.postgres.fields
import django.contrib.postgres.indexes
from django.db import migrations, models

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
        SELECT w AS u, greatest(0, least(2, length(w) - 1)) AS k FROM words
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
        migrations.RunSQL(PARTY_VARIANTS_SQL, reverse_sql="DROP FUNCTION IF EXISTS graph_memory_party_variants(bigint, text, text)"),
        migrations.AddIndex(
            model_name="node",
            index=django.contrib.postgres.indexes.GinIndex(
                models.Func(
                    models.F("firm"), models.F("party_key"), models.F("name_key"), function="graph_memory_party_variants",
                    output_field=django.contrib.postgres.fields.ArrayField(base_field=models.TextField(), size=None),
                ),
                name="gm_node_party_variants",
            ),
        ),
    ]

# Issue 14, item 3: a lawyer's conflict check reads each party's index strings as numbers from
# their own sight rows (graph_memory/models/sight.py), so it tests a few hundred bytes per party
# rather than every party's node and its TOASTed text array. The numbers are computed once per
# name, in a generated column of the node (`party_hashes`, beside `party_variants`, which
# Django does not manage either), and copied into a sight when it is built: names.variant_hash
# is the same rule in Python (SHA-256, which servers in FIPS mode still offer). Sights built
# before this have no numbers, so every one is made stale here and rebuilt on its viewer's next read.

import django.contrib.postgres.fields
from django.db import migrations, models

PARTY_HASHES_SQL = r"""
CREATE OR REPLACE FUNCTION graph_memory_party_hashes(firm bigint, party_key text, lookup_key text) RETURNS int[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT coalesce(array_agg(('x' || left(encode(sha256(convert_to(s, 'UTF8')), 'hex'), 8))::bit(32)::int), '{}')
    FROM unnest(graph_memory_party_variants(firm, party_key, lookup_key)
                || CASE WHEN party_key <> '' THEN firm::text || ':=' || party_key END) AS strings(s)
    WHERE s IS NOT NULL
$$;
"""


class Migration(migrations.Migration):
    dependencies = [("graph_memory", "0012_sight")]

    operations = [
        migrations.RunSQL(PARTY_HASHES_SQL, reverse_sql="DROP FUNCTION graph_memory_party_hashes(bigint, text, text)"),
        migrations.RunSQL(
            "ALTER TABLE graph_memory_node ADD COLUMN party_hashes int[] GENERATED ALWAYS AS "
            "(graph_memory_party_hashes(firm_id, party_key, name_key)) STORED",
            reverse_sql="ALTER TABLE graph_memory_node DROP COLUMN party_hashes",
        ),
        migrations.AddField(
            model_name="sight",
            name="variants",
            field=django.contrib.postgres.fields.ArrayField(
                base_field=models.IntegerField(), help_text="A party's index strings, hashed.", null=True, size=None
            ),
        ),
        migrations.RunSQL(
            "UPDATE graph_memory_sightviewer SET version = version + 1", reverse_sql=migrations.RunSQL.noop
        ),
    ]

# Issue 28: a firm admin's name lookup (a name or a case number anywhere in a node's label) was
# `name_key LIKE '%x%'` over every node of the firm, a sequential scan on a large one. This indexes
# what that test needs without any contrib extension (no pg_trgm): for every node, each word of
# its lookup key and every suffix of that word, as tsvector lexemes in a GIN index on the
# expression. A text found anywhere in a word is a prefix of one of that word's suffixes, so
# `'<firm>:wind':*` finds "northwind"; the reads keep the LIKE as the exact test (selectors.py).
# Every lexeme starts with the node's firm, as the conflict check's variant strings do
# (migration 0005), so an index probe never reaches another firm's entries. An expression index,
# not a stored column: a query without phrase or weights needs no recheck of the tsvector, so
# nothing is stored in the row. fastupdate off, as for the variants: a pending list would have
# every lookup scan it until the next vacuum.

from django.db import migrations

LOOKUP_WORDS_SQL = r"""
CREATE OR REPLACE FUNCTION graph_memory_lookup_words(firm bigint, name_key text) RETURNS tsvector
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT array_to_tsvector(coalesce(array_agg(DISTINCT firm::text || ':' || substr(w, i)), '{}'))
    FROM unnest(string_to_array(name_key, ' ')) AS words(w), generate_series(1, length(w)) AS i
    WHERE w <> ''
$$;
"""


class Migration(migrations.Migration):
    dependencies = [("graph_memory", "0015_legacy_summaries_stale")]

    operations = [
        migrations.RunSQL(LOOKUP_WORDS_SQL, reverse_sql="DROP FUNCTION graph_memory_lookup_words(bigint, text)"),
        migrations.RunSQL(
            "CREATE INDEX gm_node_lookup_words ON graph_memory_node "
            "USING gin (graph_memory_lookup_words(firm_id, name_key)) WITH (fastupdate = off)",
            reverse_sql="DROP INDEX gm_node_lookup_words",
        ),
    ]

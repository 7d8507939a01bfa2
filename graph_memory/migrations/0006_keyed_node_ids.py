# Keyed node and edge ids (issue 15, item 2). Ids were uuid3(<namespace in the source>,
# "node:{firm}:{kind}:{pk}"): anyone who read the code could recover the firm and the record
# from an id, and compute the id of a node they may not see. They are now HMAC-SHA256 of the
# same names under a key of this installation (graph_memory/map/graph.py, docs/SECURITY.md).
#
# The key is made here, once, by PostgreSQL's strong random source (gen_random_uuid() is
# pg_strong_random: two of them give 244 random bits), so it never passes through Python or a
# log. It lives in a table Django does not manage: `flush` keeps it, so a map rebuilt after a
# flush gets the same ids.
#
# Existing rows are rewritten in place, nothing is deleted: every node gets its keyed id, the
# edges' ends follow (they reference nodes without a database constraint), then every edge
# gets the keyed id of its new ends. Nothing else stores a node id (summaries, history, the
# AI-call log and refresh runs reference the host's cases). Old and new ids never collide: the
# old are version 3 UUIDs, the new version 8. Reversible: the reverse recomputes the uuid3 ids
# and drops the key.

from collections.abc import Callable

from django.db import migrations

# A frozen copy of graph.py's SQL (ID_KEY_TABLE, _ID_PADS_CTE, _digest_sql, _uuid_sql) as of
# this migration: later changes to the app must not change what it did.
ID_KEY_TABLE = "graph_memory_id_key"
ID_PADS_CTE = f"""idk AS MATERIALIZED (
    SELECT decode(string_agg(lpad(to_hex(b # 54), 2, '0'), '' ORDER BY i), 'hex') AS ipad,
           decode(string_agg(lpad(to_hex(b # 92), 2, '0'), '' ORDER BY i), 'hex') AS opad
    FROM (SELECT i, CASE WHEN i < length(k.key) THEN get_byte(k.key, i) ELSE 0 END AS b
          FROM {ID_KEY_TABLE} k CROSS JOIN generate_series(0, 63) AS i) key_bytes
)"""


def _digest_sql(name: str) -> str:
    return f"encode(sha256((SELECT opad FROM idk) || sha256((SELECT ipad FROM idk) || convert_to({name}, 'UTF8'))), 'hex')"


def _uuid_sql(h: str) -> str:
    return (
        f"(substr({h}, 1, 12) || '8' || substr({h}, 14, 3) "
        f"|| translate(substr({h}, 17, 1), '0123456789abcdef', '89ab89ab89ab89ab') || substr({h}, 18, 15))::uuid"
    )

OLD_NAMESPACE = "5b0f6c1e9a434d0e8f3a2c7d1e6a9b44"  # the uuid3 namespace ids were made with until now

CREATE_KEY = f"""
CREATE TABLE {ID_KEY_TABLE} (
    id smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
    key bytea NOT NULL CHECK (length(key) = 32),
    created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO {ID_KEY_TABLE} (key)
SELECT substr(uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()), 1, 32);
"""


def _old_digest_sql(name: str) -> str:
    return f"md5('\\x{OLD_NAMESPACE}'::bytea || convert_to({name}, 'UTF8'))"


def _old_uuid_sql(h: str) -> str:
    return (
        f"(substr({h}, 1, 12) || '3' || substr({h}, 14, 3) "
        f"|| translate(substr({h}, 17, 1), '0123456789abcdef', '89ab89ab89ab89ab') || substr({h}, 18))::uuid"
    )


def _rewrite(digest: Callable[[str], str], make_uuid: Callable[[str], str], pads: str) -> str:
    node_name = "'node:' || n.firm_id || ':' || n.kind || ':' || n.ref_id"
    edge_name = "'edge:' || e.case_id || ':' || e.kind || ':' || e.source_id || ':' || e.target_id"
    with_pads = f"WITH {pads}" if pads else ""
    return f"""
CREATE TEMPORARY TABLE gm_node_id_map ON COMMIT DROP AS
    {with_pads} SELECT d.old, {make_uuid('d.h')} AS new
    FROM (SELECT n.id AS old, {digest(node_name)} AS h FROM graph_memory_node n OFFSET 0) d;
UPDATE graph_memory_node n SET id = m.new FROM gm_node_id_map m WHERE n.id = m.old;
UPDATE graph_memory_edge e SET source_id = s.new, target_id = t.new
    FROM gm_node_id_map s, gm_node_id_map t WHERE s.old = e.source_id AND t.old = e.target_id;
{with_pads} UPDATE graph_memory_edge e SET id = d.new
    FROM (SELECT x.id, {make_uuid('x.h')} AS new
          FROM (SELECT e.id, {digest(edge_name)} AS h FROM graph_memory_edge e OFFSET 0) x) d
    WHERE e.id = d.id;
DROP TABLE gm_node_id_map;
"""


class Migration(migrations.Migration):
    dependencies = [("graph_memory", "0005_party_variants")]

    operations = [
        migrations.RunSQL(CREATE_KEY, reverse_sql=f"DROP TABLE {ID_KEY_TABLE}"),
        migrations.RunSQL(
            _rewrite(_digest_sql, _uuid_sql, ID_PADS_CTE),
            reverse_sql=_rewrite(_old_digest_sql, _old_uuid_sql, ""),
        ),
    ]

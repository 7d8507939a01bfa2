# Issue 28: the map's nodes hash-partitioned by firm too, like its edges and the sight (migration 0020), with
# the same conversion. A firm-wide rebuild reads every node of its firm twice per statement: unpartitioned,
# those reads were sequential scans of the whole table, every firm's nodes read and dropped by the filter, so
# a rebuild of the 50,000-case firm took longer beside 20 other firms than alone (docs/BENCHMARKS.md, Scale).
# Now it reads its firm's partition.
#
# The primary key becomes (id, firm_id) in the database (PostgreSQL wants the partition key in it); Django's
# model state keeps `id`, a derived UUID unique in any case. The unique (firm, kind, ref_id) and every other
# index already lead with the firm. No foreign key points at the table: the edges' ends and the sight's node
# are not constraints. The stored generated columns (party variants and hashes) are computed again in the copy.
# Every statement that reads a node by its id names its firm too, so it reads one partition
# (tests/contracts/test_partitions.py).

import importlib

from django.db import migrations

convert = importlib.import_module("graph_memory.migrations.0020_partition_by_firm").convert

UNIQUE_REF = {"gm_node_unique_ref": ("firm_id", "kind", "ref_id")}


class Migration(migrations.Migration):
    dependencies = [("graph_memory", "0029_trigger_lifecycle")]

    operations = [
        migrations.RunSQL(
            convert("graph_memory_node", partitioned=True, key=("id", "firm_id"), uniques=UNIQUE_REF),
            reverse_sql=convert("graph_memory_node", partitioned=False, key=("id",), uniques=UNIQUE_REF),
        ),
    ]

"""Node and edge ids are opaque: HMAC-SHA256 under a key of the installation, stable across rebuilds.

Before issue 15 an id was uuid3(<namespace in the source>, "node:{firm}:{kind}:{pk}"):
whoever read the code could recover firm and record from one id in a second and
compute the id of any hidden node. These tests hold the new rule against that
attacker: they know the code, the settings module (SECRET_KEY included) and the
old namespace, but not the key stored in the database.
"""

from __future__ import annotations

import hashlib
import hmac
import importlib
import itertools
import uuid

import pytest
from django.conf import settings
from django.db import IntegrityError, connection, transaction

from accounts.models import Firm
from graph_memory import services
from graph_memory.map.graph import ID_KEY_TABLE, edge_uuid, node_uuid
from graph_memory.models import CaseSummary, Edge, Node
from practice.models import Case

pytestmark = pytest.mark.django_db

OLD_NAMESPACE = uuid.UUID("5b0f6c1e-9a43-4d0e-8f3a-2c7d1e6a9b44")
migration = importlib.import_module("graph_memory.migrations.0006_keyed_node_ids")


def stored_key() -> bytes:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT key FROM {ID_KEY_TABLE}")
        (key,) = cursor.fetchone()
    return bytes(key)


def set_key(key: bytes) -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {ID_KEY_TABLE} SET key = %s", [key])


def keyed(key: bytes, name: str) -> uuid.UUID:
    """What the code promises, written independently: the first 128 bits of HMAC-SHA256, as a version 8 UUID."""
    digest = bytearray(hmac.new(key, name.encode(), hashlib.sha256).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x80
    digest[8] = (digest[8] & 0x3F) | 0x80
    return uuid.UUID(bytes=bytes(digest))


def node_name(node: Node) -> str:
    return f"node:{node.firm_id}:{node.kind}:{node.ref_id}"


def ids(firm: Firm) -> tuple[set[uuid.UUID], set[uuid.UUID]]:
    return (
        set(Node.objects.filter(firm=firm).values_list("id", flat=True)),
        set(Edge.objects.filter(firm=firm).values_list("id", flat=True)),
    )


def rebuild_from_scratch(firm: Firm) -> tuple[set[uuid.UUID], set[uuid.UUID]]:
    Node.objects.filter(firm=firm).delete()
    services.graph_rebuild_firm(firm_id=firm.pk)
    return ids(firm)


def test_the_key_is_made_once_by_the_migration() -> None:
    key = stored_key()
    assert len(key) == 32 and key != bytes(32)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {ID_KEY_TABLE}")
        assert cursor.fetchone()[0] == 1
        with pytest.raises(IntegrityError), transaction.atomic():
            cursor.execute(f"INSERT INTO {ID_KEY_TABLE} (id, key) VALUES (2, %s)", [bytes(32)])
    # Not a Django model: `flush` (and every TransactionTestCase) leaves it alone.
    assert ID_KEY_TABLE not in connection.introspection.django_table_names(include_views=True)


def test_ids_are_hmac_sha256_under_the_stored_key(demo_firm: Firm) -> None:
    services.graph_rebuild_firm(firm_id=demo_firm.pk)
    key = stored_key()
    nodes = list(Node.objects.filter(firm=demo_firm))
    assert len(nodes) == 15
    for node in nodes:
        assert node.pk == keyed(key, node_name(node)) == node_uuid(firm_id=node.firm_id, kind=node.kind, ref_id=node.ref_id)
        assert node.pk.version == 8
    for edge in Edge.objects.filter(firm=demo_firm):
        name = f"edge:{edge.case_id}:{edge.kind}:{edge.source_id}:{edge.target_id}"
        assert edge.pk == keyed(key, name)
        assert edge.pk == edge_uuid(case_id=edge.case_id, kind=edge.kind, source_id=edge.source_id, target_id=edge.target_id)


def test_rebuilds_give_the_same_ids(demo_firm: Firm) -> None:
    services.graph_rebuild_firm(firm_id=demo_firm.pk)
    first = ids(demo_firm)
    assert services.graph_rebuild_firm(firm_id=demo_firm.pk).written == 0
    assert ids(demo_firm) == first
    assert rebuild_from_scratch(demo_firm) == first
    assert rebuild_from_scratch(demo_firm) == first


def test_two_installations_with_different_keys_give_different_ids(demo_firm: Firm) -> None:
    services.graph_rebuild_firm(firm_id=demo_firm.pk)
    here_nodes, here_edges = ids(demo_firm)
    own_key = stored_key()
    set_key(hashlib.sha256(b"another installation").digest())  # rolled back with the test
    there_nodes, there_edges = rebuild_from_scratch(demo_firm)
    assert len(there_nodes) == len(here_nodes) == 15 and len(there_edges) == len(here_edges) == 14
    assert not there_nodes & here_nodes and not there_edges & here_edges
    set_key(own_key)
    assert rebuild_from_scratch(demo_firm) == (here_nodes, here_edges)


def test_the_old_formula_no_longer_gives_any_id(demo_firm: Firm) -> None:
    services.graph_rebuild_firm(firm_id=demo_firm.pk)
    for node in Node.objects.filter(firm=demo_firm):
        old = uuid.uuid3(OLD_NAMESPACE, node_name(node))
        assert node.pk != old
        # Not even its digest's bits: the first 12 hex digits of uuid3 are md5's own.
        assert node.pk.hex[:12] != old.hex[:12]


def test_from_an_id_and_the_code_no_hidden_id_can_be_computed(demo_firm: Firm) -> None:
    """Everything an attacker holding the source tries: every key the code or settings hold, over every
    firm and record number near the stored ones; none reproduces a stored id. (Near them, not every number
    up to the largest: sequences advance with every test before this one, rolled back or not, and the
    product of all firms and records would take hours.)"""
    services.graph_rebuild_firm(firm_id=demo_firm.pk)
    stored = set(Node.objects.values_list("id", flat=True))
    guesses = [b"", bytes(32), OLD_NAMESPACE.bytes, OLD_NAMESPACE.hex.encode(), settings.SECRET_KEY.encode(),
               hashlib.sha256(settings.SECRET_KEY.encode()).digest()]  # fmt: skip
    assert stored_key() not in guesses
    firms = range(max(1, demo_firm.pk - 5), demo_firm.pk + 6)
    refs = sorted({r + d for r in Node.objects.values_list("ref_id", flat=True) for d in range(-50, 51) if r + d > 0})
    tried = 0
    for firm_id, kind, ref_id in itertools.product(firms, Node.Kind.values, refs):
        name = f"node:{firm_id}:{kind}:{ref_id}"
        candidates = {uuid.uuid3(OLD_NAMESPACE, name), *(keyed(g, name) for g in guesses if g)}
        candidates.add(uuid.uuid5(OLD_NAMESPACE, name))
        assert not candidates & stored, name
        tried += 1
    assert tried > 1000


def test_the_migration_rewrites_old_ids_in_place_and_loses_nothing(demo_firm: Firm) -> None:
    """The migration's own SQL, run backwards (old uuid3 ids) and forwards, inside this test's transaction."""
    services.graph_rebuild_firm(firm_id=demo_firm.pk)
    for case_id in Case.objects.filter(firm=demo_firm).values_list("pk", flat=True):
        services.summarize_case(case_id=case_id)
    keyed_ids = ids(demo_firm)
    labelled = set(Edge.objects.values_list("case_id", "kind", "source__label", "target__label"))
    summaries = list(CaseSummary.objects.order_by("pk").values())
    assert len(summaries) == 4
    forward, backward = migration.Migration.operations[1].sql, migration.Migration.operations[1].reverse_sql
    with connection.cursor() as cursor:
        cursor.execute(backward)
    for node in Node.objects.filter(firm=demo_firm):
        assert node.pk == uuid.uuid3(OLD_NAMESPACE, node_name(node))
    for edge in Edge.objects.filter(firm=demo_firm):
        name = f"edge:{edge.case_id}:{edge.kind}:{edge.source_id}:{edge.target_id}"
        assert edge.pk == uuid.uuid3(OLD_NAMESPACE, name)
    with connection.cursor() as cursor:
        cursor.execute(forward)
    assert ids(demo_firm) == keyed_ids
    assert set(Edge.objects.values_list("case_id", "kind", "source__label", "target__label")) == labelled
    assert list(CaseSummary.objects.order_by("pk").values()) == summaries
    assert services.graph_rebuild_firm(firm_id=demo_firm.pk).written == 0


def test_without_a_key_nothing_is_written_with_an_unkeyed_id(demo_firm: Firm) -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {ID_KEY_TABLE}")  # rolled back with the test
    with pytest.raises(IntegrityError), transaction.atomic():
        services.graph_rebuild_firm(firm_id=demo_firm.pk)
    assert not Node.objects.filter(firm=demo_firm).exists()
    with pytest.raises(RuntimeError, match="no id key"):
        node_uuid(firm_id=demo_firm.pk, kind="case", ref_id=1)

"""Issue 29's host trial, automated: a minimal product plugs the memory in and nothing needs a workaround.

`migrate` on an empty database with its checks on, `check --database default`,
the first save, the token command, the health page and the API as two lawyers.
"""

from __future__ import annotations

import re
from io import StringIO
from typing import Any

import psycopg
import pytest
from django.core.management import call_command
from django.test import Client

from graph_memory import services
from graph_memory.models import CaseSummary, Edge, Node
from tests.scratch_db import manage, scratch_database
from tests.third_host.chambers.models import Matter, Paper
from tests.third_host.conftest import People

SETTINGS = "tests.third_host.settings"
CLIENT = "Northwind Shipping Ltd"
PAPER = "The charterer gave notice of arrest of the vessel on 3 March 2026 at Rotterdam."

FIRST_SAVE = f"""
from tests.third_host.chambers.models import Chambers, Counsel, Matter, Paper
chambers = Chambers.objects.create(handle="temple-row", name="Temple Row Chambers")
alice = Counsel.objects.create(username="alice", display_name="Alice Ashdown", chambers=chambers)
matter = Matter.objects.create(chambers=chambers, file_no="TR-1", caption="Northwind v Castell", instructing_lawyer=alice,
                               client={CLIENT!r})
Paper.objects.create(matter=matter, title="Notice of arrest", body={PAPER!r})
"""


def test_migrate_check_first_save_and_token_on_an_empty_database() -> None:
    with scratch_database("third_host_trial") as url:
        migrated = manage(SETTINGS, url, "migrate", "--no-input")  # system checks on: no --skip-checks
        assert "Applying graph_memory.0001_pgvector... OK" in migrated.stdout
        checked = manage(SETTINGS, url, "check", "--database", "default")
        assert "System check identified no issues" in checked.stdout, checked.stdout + checked.stderr
        # The first save, in a process of its own with no transaction open: the map follows at once.
        manage(SETTINGS, url, "shell", "-c", FIRST_SAVE)
        with psycopg.connect(url) as db:
            nodes = db.execute("SELECT kind, label FROM graph_memory_node ORDER BY kind").fetchall()
            stale = db.execute("SELECT stale FROM graph_memory_casesummary").fetchall()
        assert nodes == [("case", "TR-1 Northwind v Castell"), ("client", CLIENT), ("lawyer", "Alice Ashdown")]
        assert stale == [(True,)]
        assert re.fullmatch(r"[0-9a-f]{40}\n", manage(SETTINGS, url, "memory_token", "alice").stdout)
        unknown = manage(SETTINGS, url, "memory_token", "nobody", check=False)
        assert unknown.returncode == 1 and "no active user named 'nobody'" in unknown.stderr


def token(username: str, *args: str) -> str:
    out = StringIO()
    call_command("memory_token", username, *args, stdout=out)
    return out.getvalue().strip()


def api(key: str, path: str) -> tuple[int, dict[str, Any]]:
    response = Client().get(f"/api/memory/{path}", HTTP_AUTHORIZATION=f"Token {key}")
    return response.status_code, response.json()


@pytest.mark.django_db
def test_first_save_health_page_and_the_api_as_two_lawyers(
    people: People, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        matter = Matter.objects.create(
            chambers=people.chambers, file_no="TR-1", caption="Northwind v Castell",
            instructing_lawyer=people.alice, client=CLIENT,
        )  # fmt: skip
        Paper.objects.create(matter=matter, title="Notice of arrest", body=PAPER)
    assert Edge.objects.filter(case_id=matter.pk).count() == 2  # alice works on it; it is for its client
    assert CaseSummary.objects.get(case=matter).stale
    run = services.refresh_firm(firm_id=people.chambers.pk)
    assert (run.status, run.rewritten) == ("done", 1)

    client.force_login(people.head)
    health = client.get("/admin/graph_memory/casesummary/health/")
    assert health.status_code == 200 and "Memory health — Temple Row Chambers" in health.content.decode()
    client.force_login(people.operator)
    assert client.get("/admin/graph_memory/casesummary/health/?firm=temple-row").status_code == 200

    alice, bob = token("alice"), token("bob")
    assert token("alice") == alice  # the same one each time, until rotated
    rotated = token("alice", "--rotate")
    assert rotated != alice and api(alice, "nodes/?q=Northwind")[0] == 401
    alice = rotated
    status, found = api(alice, "nodes/?q=Northwind")
    assert status == 200 and {(n["kind"], n["label"]) for n in found["results"]} >= {("client", CLIENT)}
    case_id = str(Node.objects.get(kind="case", ref_id=matter.pk).pk)
    status, brief = api(alice, f"nodes/{case_id}/brief/")
    assert status == 200 and "3 March 2026" in brief["text"]
    status, hits = api(alice, "search/?q=arrest of the vessel")
    assert status == 200 and [hit["case"]["id"] for hit in hits["results"]] == [case_id]
    # Bob may open none of alice's matters: nothing of it exists for him.
    assert api(bob, "nodes/?q=Northwind") == (200, {"results": [], "has_more": False, "notice": found["notice"]})
    assert api(bob, "search/?q=arrest of the vessel")[1]["results"] == []
    hidden, absent = api(bob, f"nodes/{case_id}/brief/"), api(bob, "nodes/00000000-0000-8000-8000-000000000000/brief/")
    assert hidden == absent and hidden[0] == 404

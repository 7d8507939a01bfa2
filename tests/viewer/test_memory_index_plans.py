"""The plans of the memory index (`memory_index`), read from EXPLAIN (ANALYZE, FORMAT JSON), not timed (issue 28).

- A lawyer past VISIBLE_FIRST_MAX: their visible cases listed once (the CTE `vis`, the one read of their
  grants) and counted; the firm's cases walked in the activity's order from its index until the page is
  full, so the rows read follow the page and the share of the firm they may open; no sort of their cases;
  the lines read for the page's cases only.
- A lawyer within it: their cases sorted by their clocks; the activity's index never read.
- A firm admin: the firm's case ids never listed (only counted), each walked row probed.
- Every read of the activity's table, and of the map's nodes, is a range or a probe of the viewer's firm:
  another firm's rows are never read.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest
from django.db import connection, transaction
from django.utils import timezone

from accounts.models import User
from graph_memory.map.graph import node_uuid
from graph_memory.models import CaseActivity, CaseSummary, Node
from graph_memory.summaries import activity
from graph_memory.viewer.memory_index import MIN_LINE_BYTES, memory_index
from practice.models import Case, CaseUserObjectPermission
from practice.permissions import view_case_permission
from tests import plans
from tests.factories import ClientFactory, FirmFactory, UserFactory

pytestmark = pytest.mark.django_db

CASES, EVERY, FEW, CAP = 1_500, 3, 40, 100  # the lawyer may open every third case: 500, past CAP; `few` 40
ORDER = "gm_activity_order"


@pytest.fixture(scope="module")
def firms(django_db_setup, django_db_blocker):  # -> Iterator[dict[str, Any]]
    """Two firms of 1,500 cases, each summarised at its own time, with their case nodes (bulk: no receivers, the
    activity caught up as the nightly run does); in the first, a lawyer on every third case, one on 40 and the
    admin. Loaded once, in a transaction rolled back at the end."""
    with django_db_blocker.unblock():
        outer = transaction.atomic()
        outer.__enter__()
        try:
            made = []
            now = timezone.now()
            for slug in ("index-plans", "index-plans-other"):
                firm = FirmFactory(slug=slug)
                client, owner = ClientFactory(firm=firm), UserFactory(firm=firm, username=f"{slug}-owner")
                cases = Case.objects.bulk_create(
                    Case(firm=firm, key=f"P-{i:05d}", title=f"Matter {i}", opened=dt.date(2026, 1, 1), client=client,
                         owner=owner, description="")
                    for i in range(CASES)
                )  # fmt: skip
                CaseSummary.objects.bulk_create(
                    CaseSummary(case=c, firm=firm, text="Status\n- Open.", content={"status": [{"id": "s1", "text": "Open."}]},
                                stale=False, written_at=now - dt.timedelta(minutes=(i * 7919) % CASES))
                    for i, c in enumerate(cases)
                )  # fmt: skip
                activity.activity_rebuild(firm_id=firm.pk)
                # Each line's case node (the map's case nodes alone: the lines probe no other), so the probe is
                # planned on a table of real size.
                Node.objects.bulk_create(
                    Node(id=node_uuid(firm_id=firm.pk, kind=Node.Kind.CASE, ref_id=c.pk), firm=firm, kind=Node.Kind.CASE,
                         ref_id=c.pk, label=c.title, name_key=c.title.lower())
                    for c in cases
                )  # fmt: skip
                made.append((firm, cases))
            (firm, cases), _ = made
            permission = view_case_permission()
            lawyer = UserFactory(firm=firm, username="index-plans-lawyer")
            few = UserFactory(firm=firm, username="index-plans-few")
            CaseUserObjectPermission.objects.bulk_create(
                [CaseUserObjectPermission(content_object=c, user=lawyer, permission=permission) for c in cases[::EVERY]]
                + [CaseUserObjectPermission(content_object=c, user=few, permission=permission) for c in cases[:FEW]]
            )
            admin = UserFactory(firm=firm, username="index-plans-admin", role=User.Role.ADMIN)
            with connection.cursor() as cursor:
                # The map's nodes too. Without its case nodes the table is empty, and once earlier tests have left it
                # with statistics that say so (tests/map/test_node_ids.py run first does), it is read whole.
                for model in (Case, CaseSummary, CaseActivity, CaseUserObjectPermission, Node):
                    cursor.execute(f"ANALYZE {model._meta.db_table}")
            yield {"firm": firm, "lawyer": lawyer, "few": few, "admin": admin}
        finally:
            transaction.set_rollback(True)
            outer.__exit__(None, None, None)


@pytest.fixture(autouse=True)
def _cap(settings: Any) -> None:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "VISIBLE_FIRST_MAX": CAP}


def _fetch(settings: Any) -> int:
    return int(settings.GRAPH_MEMORY.get("INDEX_MAX_BYTES", 4096)) // MIN_LINE_BYTES + 1


def _plan(viewer: User) -> dict[str, Any]:
    """The plan of the index's one statement for `viewer`."""
    memory_index(viewer=viewer)  # the permission's id, read once
    [statement] = plans.sent(lambda: memory_index(viewer=viewer))
    return plans.analyzed(statement)


def _ran(plan: dict[str, Any], **match: Any) -> list[dict[str, Any]]:
    """The plan's nodes with these properties that ran at least once."""
    return [n for n in plans.nodes(plan) if n.get("Actual Loops") and all(n.get(k) == v for k, v in match.items())]


def _walks_its_firm_only(walk: dict[str, Any]) -> bool:
    return "firm_id =" in walk.get("Index Cond", "")


def test_a_lawyer_past_the_cap_walks_the_activity_and_lists_their_cases_once(firms, settings) -> None:
    plan, fetch = _plan(firms["lawyer"]), _fetch(settings)
    grants = _ran(plan, **{"Relation Name": CaseUserObjectPermission._meta.db_table})
    assert len(grants) == 1 and grants[0]["Actual Loops"] == 1 and grants[0]["Actual Rows"] == CASES // EVERY
    [walk] = _ran(plan, **{"Index Name": ORDER})
    assert walk["Actual Loops"] == 1 and walk["Actual Rows"] == fetch and _walks_its_firm_only(walk)
    # Stopped once the page was full: about the page times the share, not the firm (nor their 500 cases).
    met = walk["Actual Rows"] + walk.get("Rows Removed by Filter", 0)
    assert met <= 2 * EVERY * fetch < CASES
    assert all(n["Actual Rows"] <= fetch for n in _ran(plan, **{"Node Type": "Sort"}))
    assert all(n["Actual Loops"] <= 1 for n in _ran(plan, **{"CTE Name": "vis"}))  # never rescanned per row
    # Listed from their grants, the case table read by its primary key for them (their 500), never by the firm.
    [listed] = [n for n in _ran(plan, **{"Relation Name": Case._meta.db_table}) if n["Actual Rows"] > 1]
    assert listed["Actual Rows"] == CASES // EVERY and listed["Actual Loops"] == 1
    assert "= ANY" in listed.get("Index Cond", "") + listed.get("Recheck Cond", ""), listed
    assert not any(_walks_its_firm_only(n) for n in _ran(plan, **{"Relation Name": Case._meta.db_table})), plan
    summaries = _ran(plan, **{"Relation Name": CaseSummary._meta.db_table})
    assert summaries and sum(n["Actual Loops"] for n in summaries) <= fetch  # the page's lines only


def test_a_lawyer_within_the_cap_sorts_their_cases_and_never_reads_the_activity(firms) -> None:
    plan = _plan(firms["few"])
    assert not _ran(plan, **{"Index Name": ORDER}) and not _ran(plan, **{"Relation Name": CaseActivity._meta.db_table})
    sorts = _ran(plan, **{"Node Type": "Sort"})
    assert sorts and max(n["Actual Rows"] for n in sorts) == FEW


def test_a_firm_admins_index_lists_no_case_ids(firms, settings, django_assert_num_queries) -> None:
    admin, fetch = firms["admin"], _fetch(settings)
    with django_assert_num_queries(1):
        index = memory_index(viewer=admin)
    assert index.cases + index.omitted == CASES
    plan = _plan(admin)
    listed = [n for n in _ran(plan, **{"Relation Name": Case._meta.db_table}) if n["Actual Rows"] > 1]
    # Only the count reads the firm's cases together; every other read is a probe of one case. Whether the count
    # reads the firm's index or the table is the planner's call on this small table (it changes with the dead rows
    # earlier tests left), so the test pins where the read is and what it reads, not its node type.
    [count] = [n for n in plans.nodes(plan) if n.get("Subplan Name") == "CTE n"]
    assert len(listed) == 1 and listed[0]["Actual Rows"] == CASES and any(n is listed[0] for n in plans.nodes(count))
    condition = listed[0].get("Index Cond", "") + listed[0].get("Filter", "")
    assert re.search(rf"firm_id = {firms['firm'].pk}\b", condition)
    [walk] = _ran(plan, **{"Index Name": ORDER})
    assert walk["Actual Rows"] == fetch and walk.get("Rows Removed by Filter", 0) == 0 and _walks_its_firm_only(walk)
    assert not _ran(plan, **{"CTE Name": "vis"})


@pytest.mark.parametrize("who", ["lawyer", "few", "admin"])
def test_every_read_of_the_activity_and_the_map_is_the_viewers_firm(firms, who) -> None:
    """Beside a firm as large: each scan of the activity's table and of the map's nodes (a line's case node) is a
    range or a probe of the viewer's firm, and no other firm's id is in the statement."""
    plan = _plan(firms[who])
    tables = {CaseActivity._meta.db_table, Node._meta.db_table}
    scans = [n for n in plans.nodes(plan) if n.get("Relation Name") in tables]
    assert scans and all(n["Node Type"] in ("Index Scan", "Index Only Scan") for n in scans)
    # The firm as a constant (the walk), or the firm of the case probed (a line's node: a case of theirs).
    assert all(re.search(rf"firm_id = ({firms['firm'].pk}|\w+\.firm_id)\b", n.get("Index Cond", "")) for n in scans)
    assert set(re.findall(r"\bfirm_id = '?(\d+)", repr(plan))) == {str(firms["firm"].pk)}

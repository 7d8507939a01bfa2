"""The app's triggers have a lifecycle (issue 30, item 5): installed only while their feature is on,
removed with their functions when it is off, and by the reverse of the last migration, so that
`migrate graph_memory zero` leaves the host's own writes working."""

from __future__ import annotations

import psycopg
import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import connection
from django.test import override_settings

from graph_memory.apps import _sync_sight_triggers
from graph_memory.checks import check_sight_triggers
from graph_memory.ledger import triggers as ledger
from graph_memory.models import Sight, SightState
from graph_memory.wall import sight, triggers
from tests.scratch_db import manage, scratch_database

pytestmark = pytest.mark.django_db
OFF = {**settings.GRAPH_MEMORY, "LAWYER_SIGHT": False}
PREFIX = "gm\\_sight\\_%"


def _installed(cursor_sql: str) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(cursor_sql, [PREFIX])
        return [row[0] for row in cursor.fetchall()]


def sight_triggers() -> list[str]:
    return _installed("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal AND tgname LIKE %s ORDER BY 1")


def sight_functions() -> list[str]:
    return _installed("SELECT proname FROM pg_proc WHERE proname LIKE %s ORDER BY 1")


def e039() -> list[str]:
    return [m.msg for m in check_sight_triggers(databases=["default"]) if m.id == "graph_memory.E039"]


def test_the_sight_off_means_no_trigger_no_function_and_no_rows_then_on_again_means_all_and_built(
    django_user_model: type,
) -> None:
    declared = sorted(sight.trigger_names())
    assert declared and sight_triggers() == declared and e039() == []
    with override_settings(GRAPH_MEMORY=OFF):
        # Switched off but not migrated yet: the check names the triggers every write still pays for.
        [left] = e039()
        assert "while the sight is off" in left
        _sync_sight_triggers(using="default")  # what every migrate runs
        assert sight_triggers() == [] and sight_functions() == [] and e039() == []
        assert not Sight.objects.exists() and not SightState.objects.get(pk=1).built
    _sync_sight_triggers(using="default")
    assert sight_triggers() == declared and set(sight_functions()) == {"gm_sight_forget", "gm_sight_sync", "gm_sight_unbuilt"}
    assert SightState.objects.get(pk=1).built and e039() == []


def test_install_drops_a_trigger_of_the_set_it_no_longer_declares() -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TRIGGER gm_sight_left_by_an_old_version AFTER INSERT ON graph_memory_edge "
            "FOR EACH STATEMENT EXECUTE FUNCTION gm_sight_unbuilt()"
        )
    assert "gm_sight_left_by_an_old_version" in sight_triggers()
    assert sight.install() == len(sight.trigger_names())
    assert sight_triggers() == sorted(sight.trigger_names())


def test_the_command_lists_removes_and_installs_them(capsys: pytest.CaptureFixture[str]) -> None:
    call_command("memory_sight", "triggers", "ls")
    listed = capsys.readouterr().out
    assert "lawyers' sight is on" in listed
    assert all(f"installed  {name}  on " in listed for name in sight.trigger_names())
    call_command("memory_sight", "triggers", "uninstall")
    assert sight_triggers() == [] and not SightState.objects.get(pk=1).built
    call_command("memory_sight", "triggers", "ls")
    listed = capsys.readouterr().out
    assert all(f"missing    {name}  on " in listed for name in sight.trigger_names())
    call_command("memory_sight", "triggers", "install")
    call_command("memory_sight", "build")
    assert sight_triggers() == sorted(sight.trigger_names()) and SightState.objects.get(pk=1).built


# The host's writes after the memory's tables are gone: a lawyer assigned, a permission granted and revoked, a
# case saved, a user and a group changed. Any trigger left on their tables would write into a dropped table and
# fail them. (Not a case deleted: while the app is in INSTALLED_APPS, Django's own cascade deletes the memory's
# rows that point at the case, in tables `zero` dropped; a host takes the app out after `zero`.)
HOST_WRITES = """
import datetime
from django.contrib.auth.models import Group
from guardian.shortcuts import assign_perm, remove_perm
from accounts.models import Firm, User
from practice.models import Case, CaseTeamMember, Client
firm = Firm.objects.create(slug="after-zero", name="After zero")
owner = User.objects.create(username="owner", firm=firm)
lawyer = User.objects.create(username="lawyer", firm=firm)
client = Client.objects.create(firm=firm, key="c1", name="A client")
case = Case.objects.create(firm=firm, key="K-1", title="A case", opened=datetime.date(2026, 1, 1), client=client, owner=owner)
CaseTeamMember.objects.create(firm=firm, case=case, user=lawyer)
assign_perm("practice.view_case", lawyer, case)
group = Group.objects.create(name="litigation")
assign_perm("practice.view_case", group, case)
lawyer.groups.add(group)
case.title = "A case, renamed"
case.save()
lawyer.is_active = False
lawyer.save()
remove_perm("practice.view_case", group, case)
lawyer.groups.remove(group)
print("host writes done")
"""


def test_migrate_graph_memory_zero_leaves_no_trigger_and_the_host_writing() -> None:
    with scratch_database("scratch_triggers") as url:
        manage("config.settings", url, "migrate", "--no-input")
        with psycopg.connect(url, autocommit=True) as db:
            count = "SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal AND tgname LIKE %s"
            assert db.execute(count, [PREFIX]).fetchone()[0] == len(sight.trigger_names())
            assert db.execute(count, ["gm\\_ledger\\_%"]).fetchone()[0] == len(ledger.trigger_names())
        manage("config.settings", url, "migrate", "graph_memory", "zero", "--no-input")
        with psycopg.connect(url, autocommit=True) as db:  # the sight's and the access ledger's, all gone
            assert db.execute(count, ["gm\\_%"]).fetchone()[0] == 0
            assert db.execute("SELECT count(*) FROM pg_proc WHERE proname LIKE %s", ["gm\\_%"]).fetchone()[0] == 0
        assert "host writes done" in manage("config.settings", url, "shell", "-c", HOST_WRITES).stdout


def test_the_registry_finds_only_its_own_prefix() -> None:
    other = triggers.TriggerSet(prefix="gm_nothing_", enabled=lambda: True, triggers=lambda: [])
    assert triggers.installed(other) == [] and triggers.missing(other) == [] and triggers.unwanted(other) == []
    assert {name for name, _ in triggers.installed(sight.TRIGGERS)} == set(sight.trigger_names())

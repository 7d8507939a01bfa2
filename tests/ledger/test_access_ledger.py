"""The access ledger (issue 31, item 2) against the wall itself, replayed at random past times.

Each hypothesis example builds a firm of the reference host and applies random
changes one transaction each: team grants and removals (the host's signals
grant through django-guardian), group grants and revocations, joining and
leaving groups, owner changes, deactivations by save and by queryset update,
firm-admin promotions, direct grant deletes by queryset, and case deletions.
After each step the oracle asks the wall (`access.visible_case_ids`) what
every user may open, and computes why from the host's tables. At the end the
ledger is asked both questions at each step's time and at a moment between
two steps, and over random ranges: its answers must equal the oracle's at
that time (or, over a range, the union of the oracle's states in it).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.db import DatabaseError, connection, transaction
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accounts.models import Firm, User
from graph_memory import ledger
from graph_memory.adapter import get_adapter
from graph_memory.checks import check_ledger_triggers
from graph_memory.ledger import history, triggers
from graph_memory.models import AccessChange, MissedChange
from graph_memory.refresh.missed import repair_missed_changes
from graph_memory.wall import access
from practice.models import Case, CaseGroupObjectPermission, CaseTeamMember, CaseUserObjectPermission
from practice.permissions import view_case_permission
from tests.contracts.test_checks import messages
from tests.factories import CaseFactory, FirmFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

USERS, CASES, GROUPS = 4, 3, 2
STEP = st.one_of(
    st.tuples(st.just("team_add"), st.integers(0, USERS - 1), st.integers(0, CASES - 1)),
    st.tuples(st.just("team_remove"), st.integers(0, USERS - 1), st.integers(0, CASES - 1)),
    st.tuples(st.just("group_grant"), st.integers(0, GROUPS - 1), st.integers(0, CASES - 1)),
    st.tuples(st.just("group_revoke"), st.integers(0, GROUPS - 1), st.integers(0, CASES - 1)),
    st.tuples(st.just("join"), st.integers(0, USERS - 1), st.integers(0, GROUPS - 1)),
    st.tuples(st.just("leave"), st.integers(0, USERS - 1), st.integers(0, GROUPS - 1)),
    st.tuples(st.just("owner"), st.integers(0, USERS - 1), st.integers(0, CASES - 1)),
    st.tuples(st.just("active"), st.integers(0, USERS - 1), st.booleans()),
    st.tuples(st.just("active_update"), st.integers(0, USERS - 1), st.booleans()),
    st.tuples(st.just("admin"), st.integers(0, USERS - 1), st.booleans()),
    st.tuples(st.just("revoke_by_queryset"), st.integers(0, USERS - 1), st.integers(0, CASES - 1)),
    st.tuples(st.just("delete_case"), st.integers(0, USERS - 1), st.integers(0, CASES - 1)),
)


class World:
    def __init__(self, seed: int) -> None:
        self.firm = FirmFactory(slug=f"ledger-{seed}")
        self.users = [UserFactory(firm=self.firm, username=f"l{seed}-u{i}") for i in range(USERS)]
        self.groups = [Group.objects.create(name=f"l{seed}-g{i}") for i in range(GROUPS)]
        self.cases = [CaseFactory(firm=self.firm, owner=self.users[i % USERS]) for i in range(CASES)]
        self.case_ids = [c.pk for c in self.cases]
        self.user_ids = [u.pk for u in self.users]

    def apply(self, step: tuple[str, int, Any]) -> None:
        op, a, b = step
        user = User.objects.get(pk=self.user_ids[a])
        case = (
            Case.objects.filter(pk=self.case_ids[b]).first()
            if isinstance(b, int) and op not in {"join", "leave"}
            else None
        )
        if (
            op
            in {"team_add", "team_remove", "owner", "group_grant", "group_revoke", "revoke_by_queryset", "delete_case"}
            and case is None
        ):
            return  # that case was deleted
        if op == "team_add":
            CaseTeamMember.objects.get_or_create(case=case, user=user, firm=self.firm)
        elif op == "team_remove":
            for member in CaseTeamMember.objects.filter(case=case, user=user):
                member.delete()
        elif op in {"group_grant", "group_revoke"}:
            group = self.groups[a % GROUPS]
            if op == "group_grant":
                CaseGroupObjectPermission.objects.get_or_create(
                    group=group, content_object=case, permission=view_case_permission()
                )
            else:
                CaseGroupObjectPermission.objects.filter(group=group, content_object=case).delete()
        elif op == "join":
            user.groups.add(self.groups[b])
        elif op == "leave":
            user.groups.remove(self.groups[b])
        elif op == "owner":
            case.owner = user
            case.save()
        elif op == "active":
            user.is_active = b
            user.save()
        elif op == "active_update":
            User.objects.filter(pk=user.pk).update(is_active=b)
        elif op == "admin":
            user.role = User.Role.ADMIN if b else User.Role.LAWYER
            user.save()
        elif op == "revoke_by_queryset":
            CaseUserObjectPermission.objects.filter(user=user, content_object=case).delete()
        elif op == "delete_case":
            case.delete()

    def truth(self) -> dict[tuple[int, int], tuple[str, ...]]:
        """{(viewer, case): why} from the wall and the host's tables as they are now."""
        found: dict[tuple[int, int], tuple[str, ...]] = {}
        owners = dict(Case.objects.filter(pk__in=self.case_ids).values_list("pk", "owner_id"))
        grants = set(
            CaseUserObjectPermission.objects.filter(content_object_id__in=self.case_ids).values_list(
                "user_id", "content_object_id"
            )
        )
        group_grants = set(
            CaseGroupObjectPermission.objects.filter(content_object_id__in=self.case_ids).values_list(
                "group_id", "content_object_id"
            )
        )
        for user in User.objects.filter(pk__in=self.user_ids):
            visible = set(access.visible_case_ids(user).values_list("pk", flat=True))
            groups = set(user.groups.values_list("pk", flat=True))
            for case_id in visible:
                why = []
                if (user.pk, case_id) in grants:
                    why.append("owner" if owners[case_id] == user.pk else "team")
                why += [f"group:{g}" for g in sorted(groups) if (g, case_id) in group_grants]
                if user.is_firm_admin:
                    why.append("firm_admin")
                found[(user.pk, case_id)] = tuple(why)
        return found


def _now() -> dt.datetime:
    with connection.cursor() as cursor:
        cursor.execute("SELECT now()")
        return cursor.fetchone()[0]


def _state_at(answer_rows: list[history.Access], moment: dt.datetime) -> dict[int, tuple[str, ...]]:
    return {
        a.id: p.why for a in answer_rows for p in a.periods if p.start <= moment and (p.end is None or p.end > moment)
    }


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(steps=st.lists(STEP, min_size=1, max_size=12), data=st.data())
def test_point_in_time_answers_equal_the_wall_at_every_step(
    steps: list[tuple[str, int, Any]], data: st.DataObject
) -> None:
    world = World(seed=Firm.objects.count())
    times, states = [], []
    with transaction.atomic():
        times.append(_now())
    states.append(world.truth())
    for step in steps:
        with transaction.atomic():
            times.append(_now())
            world.apply(step)
        states.append(world.truth())
    assert times == sorted(set(times)), "each step is its own transaction, later than the one before"
    firm_id = world.firm.pk
    # At each step's time, and halfway to the next: the state after that step.
    for k, moment in enumerate(times):
        probes = [moment] + ([moment + (times[k + 1] - moment) / 2] if k + 1 < len(times) else [])
        for at in probes:
            expected = states[k]
            for case_id in world.case_ids:
                answer = history.who_could_open(firm_id=firm_id, case_id=case_id, start=at)
                assert _state_at(answer.rows, at) == {v: w for (v, c), w in expected.items() if c == case_id}
                assert all(a.periods for a in answer.rows)
            for user_id in world.user_ids:
                answer = history.cases_open_to(firm_id=firm_id, viewer_id=user_id, start=at)
                assert _state_at(answer.rows, at) == {c: w for (v, c), w in expected.items() if v == user_id}
    # Over a range: whoever could open it at any moment in it.
    i = data.draw(st.integers(0, len(times) - 1))
    j = data.draw(st.integers(i, len(times) - 1))
    for case_id in world.case_ids:
        answer = history.who_could_open(firm_id=firm_id, case_id=case_id, start=times[i], end=times[j])
        expected = {v for state in states[i : j + 1] for (v, c) in state if c == case_id}
        assert {a.id for a in answer.rows} == expected
    for user_id in world.user_ids:
        answer = history.cases_open_to(firm_id=firm_id, viewer_id=user_id, start=times[i], end=times[j])
        assert {a.id for a in answer.rows} == {c for state in states[i : j + 1] for (v, c) in state if v == user_id}
    # Before the firm existed nobody could open anything.
    before = times[0] - dt.timedelta(seconds=1)
    assert history.who_could_open(firm_id=firm_id, case_id=world.case_ids[0], start=before).rows == []


# --- the ledger's own guarantees, each in one transaction (every row at one time) --------------------------


def _everyone_now(firm_id: int, case_id: int) -> dict[int, tuple[str, ...]]:
    answer = history.who_could_open(firm_id=firm_id, case_id=case_id, start=timezone.now())
    return {a.id: a.periods[-1].why for a in answer.rows}


@pytest.mark.django_db
def test_the_baseline_is_the_access_standing_when_the_ledger_is_installed(personas: Any) -> None:
    group = Group.objects.create(name="litigation")
    personas.outsider.groups.add(group)
    CaseGroupObjectPermission.objects.create(
        group=group, content_object=personas.case, permission=view_case_permission()
    )
    with connection.cursor() as cursor:
        cursor.execute(f"TRUNCATE {AccessChange._meta.db_table}")
    assert ledger.install() == len(triggers.trigger_names())
    assert set(AccessChange.objects.values_list("reason", flat=True)) == {AccessChange.Reason.BASELINE}
    assert _everyone_now(personas.firm.pk, personas.case.pk) == {
        personas.owner.pk: ("owner",),
        personas.teammate.pk: ("team",),
        personas.outsider.pk: (f"group:{group.pk}",),
        personas.firm_admin.pk: ("firm_admin",),
    }
    count = AccessChange.objects.count()
    assert ledger.install() and AccessChange.objects.count() == count  # a second install writes no baseline


@pytest.mark.django_db
def test_rows_cannot_be_changed_or_deleted(personas: Any) -> None:
    row = AccessChange.objects.filter(firm_id=personas.firm.pk).first()
    for statement in (f"UPDATE {AccessChange._meta.db_table} SET granted = NOT granted WHERE id = %s",
                      f"DELETE FROM {AccessChange._meta.db_table} WHERE id = %s"):  # fmt: skip
        with pytest.raises(DatabaseError, match="append-only"), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(statement, [row.pk])


def _allow_moves() -> None:
    """The reference host keeps a case's and a user's rows in one firm with composite foreign keys; a host
    without them may move either. Dropped for this test's transaction only (it is rolled back)."""
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # no pending checks: ALTER TABLE would refuse
        cursor.execute("SELECT conrelid::regclass::text, conname FROM pg_constraint WHERE conname LIKE '%%same_firm'")
        for table, name in cursor.fetchall():
            cursor.execute(f'ALTER TABLE {table} DROP CONSTRAINT "{name}"')


@pytest.mark.django_db
def test_a_case_moved_to_another_firm_ends_in_one_and_starts_in_the_other(personas: Any) -> None:
    other = personas.other_firm_admin.firm
    _allow_moves()
    Case.objects.filter(pk=personas.case.pk).update(firm=other)  # raw enough: no signal, the trigger sees it
    assert _everyone_now(personas.firm.pk, personas.case.pk) == {}
    # In the new firm its standing grants hold (the users are of the old firm: the wall shows them nothing).
    moved = AccessChange.objects.filter(firm_id=other.pk, case_id=personas.case.pk, reason=AccessChange.Reason.MOVED)
    assert set(moved.values_list("kind", "viewer_id")) == {
        (AccessChange.Kind.CASE, None),
        (AccessChange.Kind.OWNER, personas.owner.pk),
        (AccessChange.Kind.USER_GRANT, personas.owner.pk),
        (AccessChange.Kind.USER_GRANT, personas.teammate.pk),
    }
    assert _everyone_now(other.pk, personas.case.pk) == {personas.other_firm_admin.pk: ("firm_admin",)}


@pytest.mark.django_db
def test_a_user_moved_or_deleted_is_recorded_from_the_save(personas: Any) -> None:
    other = personas.other_firm_admin.firm
    _allow_moves()
    personas.teammate.firm = other
    personas.teammate.save()
    assert personas.teammate.pk not in _everyone_now(personas.firm.pk, personas.case.pk)
    last = AccessChange.objects.filter(viewer_id=personas.teammate.pk, kind=AccessChange.Kind.USER).latest("id")
    assert (last.firm_id, last.granted, last.reason) == (other.pk, True, AccessChange.Reason.MOVED)
    outsider_id = personas.outsider.pk
    personas.outsider.delete()
    gone = AccessChange.objects.filter(viewer_id=outsider_id).latest("id")
    assert (gone.kind, gone.granted, gone.reason) == (AccessChange.Kind.USER, False, AccessChange.Reason.DELETED)
    logins = AccessChange.objects.count()
    personas.owner.save(update_fields=["last_login"])
    assert AccessChange.objects.count() == logins


@pytest.mark.django_db
def test_a_failure_to_record_never_fails_the_hosts_save_and_is_redone(personas: Any, monkeypatch: Any) -> None:
    adapter = get_adapter()

    def broken(viewer: Any) -> bool:
        raise RuntimeError("the host's role lookup is down")

    monkeypatch.setattr(adapter, "viewer_is_firm_admin", broken)
    personas.outsider.role = User.Role.ADMIN
    personas.outsider.save()  # does not raise
    missed = MissedChange.objects.get(work=MissedChange.Work.ACCESS, object_id=str(personas.outsider.pk))
    assert "role lookup is down" in missed.error
    monkeypatch.undo()
    repair_missed_changes(firm_id=personas.firm.pk)
    assert _everyone_now(personas.firm.pk, personas.case.pk)[personas.outsider.pk] == ("firm_admin",)


@pytest.mark.django_db
def test_a_missing_trigger_is_e043_and_install_puts_it_back() -> None:
    assert messages(check_ledger_triggers, databases=["default"]) == []
    name = triggers.trigger_names()[0]
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT tgrelid::regclass::text FROM pg_trigger WHERE tgname = %s", [name])
            cursor.execute(f"DROP TRIGGER {name} ON {cursor.fetchone()[0]}")
        [(check_id, msg, hint)] = messages(check_ledger_triggers, databases=["default"])
        assert check_id == "graph_memory.E043" and name in msg and "migrate" in hint
        assert triggers.install() and messages(check_ledger_triggers, databases=["default"]) == []
        assert triggers.uninstall() == len(triggers.trigger_names())
        assert set(triggers.missing_triggers()) == set(triggers.trigger_names())
        transaction.set_rollback(True)


@pytest.mark.django_db
def test_each_answer_is_a_fixed_number_of_queries(personas: Any, django_assert_num_queries: Any) -> None:
    group = Group.objects.create(name="litigation")
    personas.outsider.groups.add(group)
    CaseGroupObjectPermission.objects.create(
        group=group, content_object=personas.case, permission=view_case_permission()
    )
    for case in CaseFactory.create_batch(5, firm=personas.firm, owner=personas.owner):
        CaseGroupObjectPermission.objects.create(group=group, content_object=case, permission=view_case_permission())
    now = timezone.now()
    # The case's rows, the firm's admins, the members of its groups, those users, the ledger's start.
    with django_assert_num_queries(5):
        answer = history.who_could_open(firm_id=personas.firm.pk, case_id=personas.case.pk, start=now)
    assert {a.id for a in answer.rows} == {personas.owner.pk, personas.teammate.pk, personas.outsider.pk,
                                           personas.firm_admin.pk}  # fmt: skip
    # The user's rows, their groups' grants, those cases, the ledger's start.
    for viewer in (personas.outsider, personas.firm_admin):
        with django_assert_num_queries(4 if viewer == personas.outsider else 3):
            answer = history.cases_open_to(firm_id=personas.firm.pk, viewer_id=viewer.pk, start=now)
        assert len(answer.rows) == 6

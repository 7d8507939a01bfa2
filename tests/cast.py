"""One cast of users for the wall's tests: one case seen from every side of the wall.

`Cast` names the five places a user can stand relative to a case (as healthchecks' test base does
with owner, teammate and outsider): its `owner`, a `teammate` on its team, an `outsider` of the same
firm who may not open it, the `firm_admin` who may open every case of the firm, and the
`other_firm_admin`, who may open none of them. A test that asks "who sees this case?" asks it of
these five, whichever firm it builds.

The casts the suite grew, and how each maps onto `Cast`:

- **`personas`** (fixture, tests/conftest.py): a firm of its own ("acme-law") with one case, owned by
  "owner" with "teammate" on its team; "outsider" and "firm-admin" of the same firm; "other-admin" of
  "other-law". It is a `Cast` already (`personas_cast()`; `tests.conftest.Personas` is this class).
- **The demo firm** (fixtures `demo_firm` and `demo_users`, demo/hale-ward.json): Hale & Ward's
  lawyers alice, bob, carol and evan, its admin dana, four cases. `demo_cast(users)` stands them
  around 2025-088 (Meridian Foods' lease dispute), which alice owns with carol on its team: owner
  alice, teammate carol, outsider bob (he may open 2026-031 only), firm admin dana. The demo has no
  second firm; the other firm's admin is `stranger()`, "stranger" of "stranger-llp". evan (bob's
  teammate on 2026-031) has no place in this cast; tests that need him name him.
- **`build_world`** (tests/api_support.py): the demo firm with its map, a summary of every case and
  an API token per user, stranger included; `World.users` is keyed by username, so
  `demo_cast(world.users)` is its cast and `world.get(cast.outsider.username, path)` asks as the
  outsider. `VISIBLE` there lists every demo user's cases, evan's and carol's 2026-047 included.
- **Admin's world** (tests/admin/test_admin.py `world`): the demo firm (dana, alice) beside
  "zebulon-rival", whose admin and lawyer stand for the other firm; it has no mapping function,
  since its tests ask what a firm admin's pages show, not who sees a case.
- **The wall proof's generated firms** (tests/wall_world.py): random firms, users of random roles
  and teams; no fixed cast — its oracle decides who may open what.
- **Ad-hoc users** built with tests/factories.py, where a test needs a shape no cast has (thousands
  of cases, two firms of different sizes, a staff lawyer, a user without a firm).
"""

from __future__ import annotations

from dataclasses import dataclass

from accounts.models import Firm, User
from practice.models import Case
from tests.factories import CaseFactory, FirmFactory, UserFactory

DEMO_CASE = "2025-088"


@dataclass(frozen=True)
class Cast:
    """One case (`case`, of `firm`) and a user at each place relative to it."""

    firm: Firm
    other_firm: Firm
    case: Case
    owner: User
    teammate: User
    outsider: User
    firm_admin: User
    other_firm_admin: User

    def __post_init__(self) -> None:
        # What a place means, checked from the rows already loaded: a cast that maps a helper wrongly fails here.
        assert self.case.firm_id == self.firm.pk and self.case.owner_id == self.owner.pk
        assert {u.firm_id for u in (self.owner, self.teammate, self.outsider, self.firm_admin)} == {self.firm.pk}
        assert self.other_firm_admin.firm_id == self.other_firm.pk != self.firm.pk
        assert self.firm_admin.role == self.other_firm_admin.role == User.Role.ADMIN
        assert User.Role.LAWYER == self.owner.role == self.teammate.role == self.outsider.role


def personas_cast() -> Cast:
    """The `personas` fixture's firm: acme-law, one case, every place filled by a user of its own."""
    firm = FirmFactory(slug="acme-law")
    owner = UserFactory(firm=firm, username="owner")
    teammate = UserFactory(firm=firm, username="teammate")
    outsider = UserFactory(firm=firm, username="outsider")
    firm_admin = UserFactory(firm=firm, username="firm-admin", role=User.Role.ADMIN)
    other_firm_admin = UserFactory(firm=FirmFactory(slug="other-law"), username="other-admin", role=User.Role.ADMIN)
    case = CaseFactory(firm=firm, owner=owner, team=[teammate])
    return Cast(firm, other_firm_admin.firm, case, owner, teammate, outsider, firm_admin, other_firm_admin)


def stranger() -> User:
    """The other firm's admin the demo firm lacks: "stranger" of "stranger-llp" (made once, then found)."""
    return UserFactory(firm=FirmFactory(slug="stranger-llp"), username="stranger", role=User.Role.ADMIN)


def demo_cast(users: dict[str, User]) -> Cast:
    """The demo firm's users (`demo_users`, or `build_world`'s `World.users`) around case 2025-088."""
    other_firm_admin = users.get("stranger") or stranger()
    owner = users["alice"]
    return Cast(
        firm=owner.firm,
        other_firm=other_firm_admin.firm,
        case=Case.objects.get(firm_id=owner.firm_id, key=DEMO_CASE),
        owner=owner,
        teammate=users["carol"],
        outsider=users["bob"],
        firm_admin=users["dana"],
        other_firm_admin=other_firm_admin,
    )

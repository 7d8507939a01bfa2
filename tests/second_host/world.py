"""A small office of the second host, written out by hand: the shared fixture of its graph, brief, search and API tests.

Office `kanzlei-nord`:

| matter | lead | team | reviewer | client | adverse |
| --- | --- | --- | --- | --- | --- |
| 2026/014 Nordwind / Castell acquisition | owner | teammate | | Nordwind Holdings AG | Castell Components GmbH |
| 2025/088 Meridian Foods — lease dispute (Parkside) | owner | | | Meridian Foods Corp. | Parkside Realty Partners |
| 2026/047 Lee v. Meridian Foods (wrongful termination) | outsider | | reviewer | Meridian Foods Corp. | Jordan Lee |
| 2026/099 New enquiry (no client yet: not in the map) | teammate | | | | |

`firm_admin` manages the office. Office `kanzlei-sued` (its admin is
`other_admin`) has one matter for a client of the same name, "Nordwind
Holdings AG", that must never surface in kanzlei-nord.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from tests.second_host.factories import (
    AttorneyFactory,
    BillFactory,
    DueDateFactory,
    FilingFactory,
    LawOfficeFactory,
    MatterFactory,
    MemoFactory,
    PartyFactory,
)
from tests.second_host.matters.models import DueDate, Filing, Matter, Memo
from tests.second_host.offices.models import Attorney, LawOffice

ACQ, LEASE, TERM, ENQ, SUED = "2026/014", "2025/088", "2026/047", "2026/099", "S/001"
# The matters each persona may open.
VISIBLE = {
    "owner": {ACQ, LEASE},
    "teammate": {ACQ, ENQ},
    "outsider": {TERM},
    "reviewer": {TERM},
    "firm_admin": {ACQ, LEASE, TERM, ENQ},
    "other_admin": {SUED},
}
PERSONAS = tuple(VISIBLE)
# Facts only the termination matter's records hold.
TERMINATION_FACTS = ("2026/047", "150,000", "Jordan Lee", "retaliation")
LEASE_FACTS = ("2025/088", "Harbor Street", "540,000.00")


@dataclass
class Office:
    office: LawOffice
    other: LawOffice
    people: dict[str, Attorney]
    matters: dict[str, Matter] = field(default_factory=dict)


def _attorney(office: LawOffice, username: str, full_name: str, **kwargs: object) -> Attorney:
    return AttorneyFactory(office=office, username=username, full_name=full_name, **kwargs)


def build_office() -> Office:
    """Every row of the table above, through the ORM (the adapter's receivers see each one)."""
    nord = LawOfficeFactory(code="kanzlei-nord", display_name="Kanzlei Nord")
    sued = LawOfficeFactory(code="kanzlei-sued", display_name="Kanzlei Süd")
    people = {
        "owner": _attorney(nord, "owner", "Olga Owner"),
        "teammate": _attorney(nord, "teammate", "Tariq Teammate"),
        "outsider": _attorney(nord, "outsider", "Otto Outsider"),
        "reviewer": _attorney(nord, "reviewer", "Rita Reviewer"),
        "firm_admin": _attorney(nord, "firm-admin", "Frieda Admin", manages_office=True),
        "other_admin": _attorney(sued, "other-admin", "Sven Süd", manages_office=True),
    }
    nordwind = PartyFactory(office=nord, name="Nordwind Holdings AG")
    meridian = PartyFactory(office=nord, name="Meridian Foods Corp.")
    world = Office(nord, sued, people)
    owner, teammate, outsider = people["owner"], people["teammate"], people["outsider"]

    acq = MatterFactory(
        office=nord, reference=ACQ, name="Nordwind / Castell acquisition", lead=owner, team=[teammate],
        client=nordwind, adverse=[PartyFactory(office=nord, name="Castell Components GmbH")],
        opened_on=dt.date(2026, 3, 2), synopsis="Nordwind Holdings AG is buying all shares of Castell Components GmbH.",
    )  # fmt: skip
    FilingFactory(
        matter=acq, title="Share purchase agreement v3", filed_at=dt.datetime(2026, 10, 20, 9, tzinfo=dt.UTC),
        pages=["The purchase price is EUR 48,000,000.",
               "The Buyer may terminate if antitrust clearance is not obtained by 15 December 2026."],
    )  # fmt: skip
    FilingFactory(matter=acq, title="Scan in progress", state=Filing.State.SCANNING, pages=["Unread zqscanvx."])
    DueDateFactory(matter=acq, label="Target signing", due_on=dt.date(2026, 12, 15))
    DueDateFactory(matter=acq, label="Kick-off call", due_on=dt.date(2026, 3, 10), state=DueDate.State.MET)
    BillFactory(matter=acq, number="RE-0057", issued_on=dt.date(2026, 10, 1), entries=[("10.50", "300.00"), ("2", "250")])
    MemoFactory(matter=acq, body="Price adjustment talks continue. Is the escrow agreed?",
                written_at=dt.datetime(2026, 10, 22, 8, tzinfo=dt.UTC))  # fmt: skip
    MemoFactory(matter=acq, kind=Memo.Kind.DRAFT, heading="Letter to Castell", body="Draft letter about the escrow.",
                written_at=dt.datetime(2026, 10, 23, 8, tzinfo=dt.UTC))  # fmt: skip

    lease = MatterFactory(
        office=nord, reference=LEASE, name="Meridian Foods — lease dispute (Parkside)", lead=owner, client=meridian,
        adverse=[PartyFactory(office=nord, name="Parkside Realty Partners")], opened_on=dt.date(2025, 9, 1),
        synopsis="Rent escalation dispute with the landlord over the Harbor Street lease.",
    )  # fmt: skip
    BillFactory(matter=lease, number="RE-0031", issued_on=dt.date(2026, 4, 30), entries=[("1800", "300")])
    MemoFactory(matter=lease, body="The landlord claims back rent. Mediation is booked for January.")

    term = MatterFactory(
        office=nord, reference=TERM, name="Lee v. Meridian Foods (wrongful termination)", lead=outsider,
        client=meridian, adverse=[PartyFactory(office=nord, name="Jordan Lee", form="person")],
        reviewers=[people["reviewer"]], opened_on=dt.date(2026, 5, 4),
        synopsis="Former employee Jordan Lee claims retaliation after a safety complaint.",
    )  # fmt: skip
    MemoFactory(matter=term, body="Confidential settlement authority up to EUR 150,000. Next steps?")
    DueDateFactory(matter=term, label="Answer to the complaint", due_on=dt.date(2026, 11, 30))

    enq = MatterFactory(office=nord, reference=ENQ, name="New enquiry", lead=teammate, client=False,
                        stage=Matter.Stage.INTAKE, synopsis="A caller asked about a supplier dispute.")  # fmt: skip
    sued_matter = MatterFactory(
        office=sued, reference=SUED, name="Südwind v. Nordwind", lead=people["other_admin"],
        client=PartyFactory(office=sued, name="Nordwind Holdings AG"), synopsis="Confidential zqsuedvx advice.",
    )  # fmt: skip
    world.matters = {ACQ: acq, LEASE: lease, TERM: term, ENQ: enq, SUED: sued_matter}
    return world

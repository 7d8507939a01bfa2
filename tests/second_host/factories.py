"""factory_boy factories of the second host: the one place its tests build records."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import factory
from django.utils import timezone

from tests.second_host.matters.models import (
    Assignment,
    Bill,
    DueDate,
    Engagement,
    Filing,
    FilingPage,
    Matter,
    Memo,
    Party,
    TimeEntry,
)
from tests.second_host.offices.models import Attorney, LawOffice


class LawOfficeFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = LawOffice
        django_get_or_create = ("code",)

    code = factory.Sequence(lambda n: f"office-{n}")
    display_name = factory.Sequence(lambda n: f"Office {n} Partnerschaft")


class AttorneyFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Attorney
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"attorney{n}")
    full_name = factory.Faker("name")
    email = factory.LazyAttribute(lambda a: f"{a.username}@example.com")
    office = factory.SubFactory(LawOfficeFactory)
    manages_office = False
    is_staff = factory.LazyAttribute(lambda a: a.manages_office)


class PartyFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Party

    office = factory.SubFactory(LawOfficeFactory)
    name = factory.Sequence(lambda n: f"Party {n} GmbH")


class MatterFactory(factory.django.DjangoModelFactory):
    """A matter with a client (a new party unless `client=` names one; `client=False` for none yet).

    `adverse=[party, ...]`, `team=[attorney, ...]` and `reviewers=[attorney, ...]` add the links.
    """

    class Meta:
        model = Matter
        skip_postgeneration_save = True

    office = factory.SubFactory(LawOfficeFactory)
    reference = factory.Sequence(lambda n: f"M/{n:04d}")
    name = factory.Sequence(lambda n: f"Matter {n}")
    stage = Matter.Stage.ACTIVE
    opened_on = dt.date(2026, 2, 1)
    synopsis = "A matter."
    lead = factory.SubFactory(AttorneyFactory, office=factory.SelfAttribute("..office"))

    @factory.post_generation
    def client(self, create: bool, extracted: Any, **kwargs: Any) -> None:
        party = extracted if extracted is not None else PartyFactory(office=self.office)
        if party is not False:
            Engagement.objects.create(matter=self, party=party, role=Engagement.Role.CLIENT)

    @factory.post_generation
    def adverse(self, create: bool, extracted: list[Party] | None, **kwargs: Any) -> None:
        for party in extracted or []:
            Engagement.objects.create(matter=self, party=party, role=Engagement.Role.ADVERSE)

    @factory.post_generation
    def team(self, create: bool, extracted: list[Attorney] | None, **kwargs: Any) -> None:
        for attorney in extracted or []:
            Assignment.objects.create(matter=self, attorney=attorney)

    @factory.post_generation
    def reviewers(self, create: bool, extracted: list[Attorney] | None, **kwargs: Any) -> None:
        for attorney in extracted or []:
            Assignment.objects.create(matter=self, attorney=attorney, capacity=Assignment.Capacity.REVIEWER)


class FilingFactory(factory.django.DjangoModelFactory):
    """A processed filing with two pages unless `pages=[...]` says otherwise."""

    class Meta:
        model = Filing
        skip_postgeneration_save = True

    matter = factory.SubFactory(MatterFactory)
    title = factory.Sequence(lambda n: f"Filing {n}")
    filed_at = factory.LazyFunction(timezone.now)
    state = Filing.State.PROCESSED

    @factory.post_generation
    def pages(self, create: bool, extracted: list[str] | None, **kwargs: Any) -> None:
        texts = ["Page one text.", "Page two text."] if extracted is None else extracted
        for number, text in enumerate(texts, start=1):
            FilingPage.objects.create(filing=self, number=number, text=text)


class MemoFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Memo

    matter = factory.SubFactory(MatterFactory)
    author = factory.SelfAttribute("matter.lead")
    kind = Memo.Kind.FILE_NOTE
    heading = ""
    body = "A file note."
    written_at = factory.LazyFunction(timezone.now)


class DueDateFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = DueDate

    matter = factory.SubFactory(MatterFactory)
    label = factory.Sequence(lambda n: f"Due date {n}")
    due_on = dt.date(2026, 12, 15)
    state = DueDate.State.PENDING


class BillFactory(factory.django.DjangoModelFactory):
    """A bill; `entries=[(hours, rate), ...]` adds its time entries (its amount is their sum)."""

    class Meta:
        model = Bill
        skip_postgeneration_save = True

    matter = factory.SubFactory(MatterFactory)
    number = factory.Sequence(lambda n: f"RE-{n:05d}")
    issued_on = dt.date(2026, 6, 1)
    currency = "EUR"
    state = Bill.State.ISSUED

    @factory.post_generation
    def entries(self, create: bool, extracted: list[tuple[str, str]] | None, **kwargs: Any) -> None:
        for hours, rate in extracted or []:
            TimeEntryFactory(matter=self.matter, bill=self, hours=Decimal(hours), rate=Decimal(rate))


class TimeEntryFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = TimeEntry

    matter = factory.SubFactory(MatterFactory)
    attorney = factory.SelfAttribute("matter.lead")
    worked_on = dt.date(2026, 5, 20)
    hours = Decimal("1.50")
    rate = Decimal("300.00")
    narrative = "Reviewed the file."

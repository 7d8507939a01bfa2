"""factory_boy factories: the one place tests build records."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import factory
from django.utils import timezone

from accounts.models import Firm, User
from practice.models import (
    Case,
    CaseCounterparty,
    CaseTeamMember,
    Client,
    Counterparty,
    Deadline,
    Document,
    Draft,
    Invoice,
    Note,
)


class FirmFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Firm
        django_get_or_create = ("slug",)

    slug = factory.Sequence(lambda n: f"firm-{n}")
    name = factory.Sequence(lambda n: f"Firm {n} LLP")
    timezone = "UTC"


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    name = factory.Faker("name")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.com")
    firm = factory.SubFactory(FirmFactory)
    role = User.Role.LAWYER
    is_staff = factory.LazyAttribute(lambda u: u.role == User.Role.ADMIN)


class ClientFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Client

    firm = factory.SubFactory(FirmFactory)
    key = factory.Sequence(lambda n: f"client-{n}")
    name = factory.Sequence(lambda n: f"Client {n} Holdings, Inc.")


class CounterpartyFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Counterparty

    firm = factory.SubFactory(FirmFactory)
    key = factory.Sequence(lambda n: f"cp-{n}")
    name = factory.Sequence(lambda n: f"Counterparty {n} LLC")


class CaseFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Case
        skip_postgeneration_save = True

    firm = factory.SubFactory(FirmFactory)
    key = factory.Sequence(lambda n: f"2026-{n:04d}")
    title = factory.Sequence(lambda n: f"Matter {n}")
    status = Case.Status.OPEN
    opened = dt.date(2026, 1, 15)
    description = "A matter."
    client = factory.SubFactory(ClientFactory, firm=factory.SelfAttribute("..firm"))
    owner = factory.SubFactory(UserFactory, firm=factory.SelfAttribute("..firm"))

    @factory.post_generation
    def team(self, create: bool, extracted: list[User] | None, **kwargs: object) -> None:
        for user in extracted or []:
            CaseTeamMember.objects.create(case=self, user=user, firm_id=self.firm_id)

    @factory.post_generation
    def counterparties(self, create: bool, extracted: list[Counterparty] | None, **kwargs: object) -> None:
        for cp in extracted or []:
            CaseCounterparty.objects.create(case=self, counterparty=cp, firm_id=self.firm_id)


class CaseRecordFactory(factory.django.DjangoModelFactory):
    class Meta:
        abstract = True

    case = factory.SubFactory(CaseFactory)
    firm = factory.SelfAttribute("case.firm")
    key = factory.Sequence(lambda n: f"rec-{n}")


class DocumentFactory(CaseRecordFactory):
    class Meta:
        model = Document

    title = factory.Sequence(lambda n: f"Document {n}")
    status = Document.Status.PROCESSED
    created = factory.LazyFunction(timezone.now)
    pages = factory.LazyFunction(lambda: ["Page one text.", "Page two text."])


class DraftFactory(CaseRecordFactory):
    class Meta:
        model = Draft

    title = factory.Sequence(lambda n: f"Draft {n}")
    created = factory.LazyFunction(timezone.now)
    text = "Draft text."


class DeadlineFactory(CaseRecordFactory):
    class Meta:
        model = Deadline

    title = factory.Sequence(lambda n: f"Deadline {n}")
    due = dt.date(2026, 12, 15)
    done = False


class InvoiceFactory(CaseRecordFactory):
    class Meta:
        model = Invoice

    number = factory.Sequence(lambda n: f"INV-{n:04d}")
    issued = dt.date(2026, 5, 1)
    amount = Decimal("1000.00")
    currency = "USD"
    status = Invoice.Status.SENT


class NoteFactory(CaseRecordFactory):
    class Meta:
        model = Note

    created = factory.LazyFunction(timezone.now)
    text = "A working note."
    author = factory.SelfAttribute("case.owner")

"""The second host's matters and what is filed on them.

Shaped unlike `practice` on purpose: a matter has a `reference`, a `name` and a
`lead`; its client and adverse parties are one `Party` model linked through
`Engagement` with a role; its team is `Assignment` (with a capacity: a
reviewer may open the matter but is not on its team); filings keep their
pages as rows; money is time entries gathered into bills, a bill's amount
being the sum of its entries. Only `Matter` and `Party` carry the office;
everything filed on a matter belongs to it through the matter.
"""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.db import models
from django.db.models import Q


class Party(models.Model):
    class Form(models.TextChoices):
        PERSON = "person", "Natural person"
        ORGANISATION = "organisation", "Organisation"

    office = models.ForeignKey("offices.LawOffice", on_delete=models.CASCADE, related_name="parties")
    name = models.CharField(max_length=300)
    form = models.CharField(max_length=16, choices=Form.choices, default=Form.ORGANISATION)

    class Meta:
        ordering = ["name", "pk"]
        verbose_name_plural = "parties"

    def __str__(self) -> str:
        return self.name


class Matter(models.Model):
    class Stage(models.TextChoices):
        INTAKE = "intake", "Intake"
        ACTIVE = "active", "Active"
        DORMANT = "dormant", "Dormant"
        CONCLUDED = "concluded", "Concluded"

    office = models.ForeignKey("offices.LawOffice", on_delete=models.CASCADE, related_name="matters")
    reference = models.CharField(max_length=40)
    name = models.CharField(max_length=300)
    stage = models.CharField(max_length=16, choices=Stage.choices, default=Stage.INTAKE)
    opened_on = models.DateField(null=True, blank=True)
    synopsis = models.TextField(blank=True)
    lead = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="led_matters")
    team = models.ManyToManyField(settings.AUTH_USER_MODEL, through="Assignment", related_name="assigned_matters")
    parties = models.ManyToManyField(Party, through="Engagement", related_name="matters")
    last_touched = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["reference"]
        constraints = [models.UniqueConstraint(fields=["office", "reference"], name="matter_office_reference_unique")]

    def __str__(self) -> str:
        return f"{self.reference}: {self.name}"


class Engagement(models.Model):
    class Role(models.TextChoices):
        CLIENT = "client", "Client"
        ADVERSE = "adverse", "Adverse party"

    matter = models.ForeignKey(Matter, on_delete=models.CASCADE, related_name="engagements")
    party = models.ForeignKey(Party, on_delete=models.PROTECT, related_name="engagements")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.ADVERSE)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["matter", "party"], name="engagement_matter_party_unique"),
            models.UniqueConstraint(fields=["matter"], condition=Q(role="client"), name="engagement_one_client"),
        ]

    def __str__(self) -> str:
        return f"{self.party_id} as {self.role} on {self.matter_id}"


class Assignment(models.Model):
    class Capacity(models.TextChoices):
        ASSOCIATE = "associate", "Associate"
        PARALEGAL = "paralegal", "Paralegal"
        # May open the matter (a risk or quality review) without being on its team.
        REVIEWER = "reviewer", "Reviewer"

    matter = models.ForeignKey(Matter, on_delete=models.CASCADE, related_name="assignments")
    attorney = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments")
    capacity = models.CharField(max_length=16, choices=Capacity.choices, default=Capacity.ASSOCIATE)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["matter", "attorney"], name="assignment_matter_attorney_unique")]

    def __str__(self) -> str:
        return f"{self.attorney_id} ({self.capacity}) on {self.matter_id}"


class Filing(models.Model):
    class State(models.TextChoices):
        RECEIVED = "received", "Received"
        SCANNING = "scanning", "Scanning"
        PROCESSED = "processed", "Processed"
        REJECTED = "rejected", "Rejected"

    matter = models.ForeignKey(Matter, on_delete=models.CASCADE, related_name="filings")
    title = models.CharField(max_length=300)
    filed_at = models.DateTimeField()
    state = models.CharField(max_length=16, choices=State.choices, default=State.RECEIVED)

    def __str__(self) -> str:
        return self.title


class FilingPage(models.Model):
    filing = models.ForeignKey(Filing, on_delete=models.CASCADE, related_name="pages")
    number = models.PositiveIntegerField()
    text = models.TextField(blank=True)

    class Meta:
        ordering = ["filing", "number"]
        constraints = [models.UniqueConstraint(fields=["filing", "number"], name="filing_page_unique")]

    def __str__(self) -> str:
        return f"page {self.number} of {self.filing_id}"


class Bill(models.Model):
    class State(models.TextChoices):
        PENDING = "pending", "Pending"
        ISSUED = "issued", "Issued"
        SETTLED = "settled", "Settled"
        CANCELLED = "cancelled", "Cancelled"

    matter = models.ForeignKey(Matter, on_delete=models.CASCADE, related_name="bills")
    number = models.CharField(max_length=40)
    issued_on = models.DateField()
    currency = models.CharField(max_length=3, default="EUR")
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING)

    def __str__(self) -> str:
        return self.number


class TimeEntry(models.Model):
    matter = models.ForeignKey(Matter, on_delete=models.CASCADE, related_name="time_entries")
    attorney = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    bill = models.ForeignKey(Bill, null=True, blank=True, on_delete=models.SET_NULL, related_name="entries")
    worked_on = models.DateField()
    hours = models.DecimalField(max_digits=6, decimal_places=2)
    rate = models.DecimalField(max_digits=10, decimal_places=2, default=Decimal("250.00"))
    narrative = models.TextField(blank=True)

    class Meta:
        verbose_name_plural = "time entries"

    def __str__(self) -> str:
        return f"{self.hours} h on {self.worked_on}"


class Memo(models.Model):
    class Kind(models.TextChoices):
        FILE_NOTE = "file_note", "File note"
        DRAFT = "draft", "Draft"

    matter = models.ForeignKey(Matter, on_delete=models.CASCADE, related_name="memos")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.FILE_NOTE)
    heading = models.CharField(max_length=300, blank=True)
    body = models.TextField()
    written_at = models.DateTimeField()
    # Set only on file notes the assistant filed through the memory's adapter.
    origin = models.JSONField(null=True, blank=True)

    def __str__(self) -> str:
        return self.heading or f"{self.get_kind_display()} of {self.written_at:%Y-%m-%d}"


class DueDate(models.Model):
    class State(models.TextChoices):
        PENDING = "pending", "Pending"
        MET = "met", "Met"
        WAIVED = "waived", "Waived"

    matter = models.ForeignKey(Matter, on_delete=models.CASCADE, related_name="due_dates")
    label = models.CharField(max_length=300)
    due_on = models.DateField()
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING)

    def __str__(self) -> str:
        return f"{self.label} ({self.due_on})"

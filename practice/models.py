"""The reference practice-management product: the records the memory layer reads.

Every row belongs to exactly one firm. Rows that point at each other must
belong to the same firm; besides the checks in `clean()`, composite foreign
keys on (id, firm_id) in migration 0002 make a cross-firm link impossible at
the database level.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.core.exceptions import ValidationError
from django.db import models
from guardian.models import GroupObjectPermissionBase, UserObjectPermissionBase


class FirmOwned(models.Model):
    firm = models.ForeignKey("accounts.Firm", on_delete=models.CASCADE, related_name="+")

    class Meta:
        abstract = True


class Client(FirmOwned):
    key = models.CharField(max_length=100)
    name = models.CharField(max_length=300)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["firm", "key"], name="client_firm_key_unique")]

    def __str__(self) -> str:
        return self.name


class Counterparty(FirmOwned):
    key = models.CharField(max_length=100)
    name = models.CharField(max_length=300)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "counterparties"
        constraints = [models.UniqueConstraint(fields=["firm", "key"], name="counterparty_firm_key_unique")]

    def __str__(self) -> str:
        return self.name


class Case(FirmOwned):
    class Status(models.TextChoices):
        OPEN = "open", "Open"
        ON_HOLD = "on_hold", "On hold"
        CLOSED = "closed", "Closed"

    key = models.CharField("number", max_length=100)
    title = models.CharField(max_length=300)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    opened = models.DateField()
    description = models.TextField(blank=True)
    client = models.ForeignKey(Client, on_delete=models.PROTECT, related_name="cases")
    counterparties = models.ManyToManyField(Counterparty, through="CaseCounterparty", related_name="cases", blank=True)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="owned_cases")
    team = models.ManyToManyField(settings.AUTH_USER_MODEL, through="CaseTeamMember", related_name="team_cases", blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["key"]
        constraints = [models.UniqueConstraint(fields=["firm", "key"], name="case_firm_key_unique")]

    def __str__(self) -> str:
        return f"{self.key} {self.title}"

    def clean(self) -> None:
        errors = {}
        if self.client_id and self.client.firm_id != self.firm_id:
            errors["client"] = "The client belongs to another firm."
        if self.owner_id and self.owner.firm_id != self.firm_id:
            errors["owner"] = "The owner belongs to another firm."
        if errors:
            raise ValidationError(errors)


class CaseCounterparty(FirmOwned):
    case = models.ForeignKey(Case, on_delete=models.CASCADE)
    counterparty = models.ForeignKey(Counterparty, on_delete=models.PROTECT)

    class Meta:
        verbose_name = "case counterparty"
        verbose_name_plural = "case counterparties"
        constraints = [models.UniqueConstraint(fields=["case", "counterparty"], name="case_counterparty_unique")]

    def __str__(self) -> str:
        return f"{self.case} against {self.counterparty}"


class CaseTeamMember(FirmOwned):
    case = models.ForeignKey(Case, on_delete=models.CASCADE)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["case", "user"], name="case_team_member_unique")]

    def __str__(self) -> str:
        return f"{self.user} on {self.case}"


class CaseUserObjectPermission(UserObjectPermissionBase):
    """django-guardian's direct foreign-key permission row for one case."""

    content_object = models.ForeignKey(Case, on_delete=models.CASCADE)


class CaseGroupObjectPermission(GroupObjectPermissionBase):
    content_object = models.ForeignKey(Case, on_delete=models.CASCADE)


class CaseRecord(FirmOwned):
    """A record filed on one case; `key` is unique within the case."""

    key = models.CharField(max_length=100)

    class Meta:
        abstract = True
        ordering = ["case", "key"]

    def __str__(self) -> str:
        title = getattr(self, "title", "")
        return f"{title} ({self.key})" if title else self.key


class Document(CaseRecord):
    class Status(models.TextChoices):
        UPLOADED = "uploaded", "Uploaded"
        PROCESSING = "processing", "Processing"
        PROCESSED = "processed", "Processed"
        FAILED = "failed", "Failed"

    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="documents")
    title = models.CharField(max_length=300)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.UPLOADED)
    created = models.DateTimeField()
    pages = ArrayField(models.TextField(), default=list, blank=True, help_text="Extracted text, one item a page.")

    class Meta(CaseRecord.Meta):
        constraints = [models.UniqueConstraint(fields=["case", "key"], name="document_case_key_unique")]


class Draft(CaseRecord):
    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="drafts")
    title = models.CharField(max_length=300)
    created = models.DateTimeField()
    text = models.TextField(blank=True)

    class Meta(CaseRecord.Meta):
        constraints = [models.UniqueConstraint(fields=["case", "key"], name="draft_case_key_unique")]


class Deadline(CaseRecord):
    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="deadlines")
    title = models.CharField(max_length=300)
    due = models.DateField()
    done = models.BooleanField(default=False)

    class Meta(CaseRecord.Meta):
        constraints = [models.UniqueConstraint(fields=["case", "key"], name="deadline_case_key_unique")]


class Invoice(CaseRecord):
    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        SENT = "sent", "Sent"
        PAID = "paid", "Paid"
        VOID = "void", "Void"

    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="invoices")
    number = models.CharField(max_length=100)
    issued = models.DateField()
    amount = models.DecimalField(max_digits=16, decimal_places=2)
    currency = models.CharField(max_length=3, help_text="ISO 4217 code")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.DRAFT)

    class Meta(CaseRecord.Meta):
        constraints = [models.UniqueConstraint(fields=["case", "key"], name="invoice_case_key_unique")]


class Note(CaseRecord):
    """A working note on a case."""

    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="notes")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created = models.DateTimeField()
    title = models.CharField(max_length=300, blank=True, default="")
    text = models.TextField()
    # Set only on notes the assistant filed (graph_memory's file_note): {"conversation_id", "message_ids"}.
    origin = models.JSONField(null=True, blank=True, help_text="Where an assistant-filed note came from; empty for notes people wrote.")

    class Meta(CaseRecord.Meta):
        constraints = [models.UniqueConstraint(fields=["case", "key"], name="note_case_key_unique")]

    @property
    def assistant_filed(self) -> bool:
        return self.origin is not None

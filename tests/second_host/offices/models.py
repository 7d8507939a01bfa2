"""The second host's firms and people: a `LawOffice` known by its `code`, and `Attorney`, its user model.

Unlike the reference host, an attorney's firm is `office` (not `firm`), and
being its administrator is a flag of its own, `manages_office` (not a role).
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractUser
from django.db import models


class LawOffice(models.Model):
    code = models.CharField("office code", max_length=32, unique=True, help_text="What commands call the office.")
    display_name = models.CharField(max_length=200)
    founded = models.DateField(null=True, blank=True)

    class Meta:
        ordering = ["code"]

    def __str__(self) -> str:
        return self.display_name


class Attorney(AbstractUser):
    # Null only for platform staff, who belong to no office.
    office = models.ForeignKey(LawOffice, null=True, blank=True, on_delete=models.CASCADE, related_name="attorneys")
    full_name = models.CharField(max_length=200, blank=True)
    manages_office = models.BooleanField(default=False, help_text="May open every matter of the office.")
    bar_number = models.CharField(max_length=32, blank=True)

    class Meta:
        ordering = ["username"]

    def __str__(self) -> str:
        return self.full_name or self.username

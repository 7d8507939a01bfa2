"""Firms and the people who work in them."""

from __future__ import annotations

import zoneinfo

from django.contrib.auth.models import AbstractUser
from django.core.exceptions import ValidationError
from django.db import models


def validate_timezone(value: str) -> None:
    if value not in zoneinfo.available_timezones():
        raise ValidationError(f"unknown time zone {value!r}")


class Firm(models.Model):
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    timezone = models.CharField(max_length=64, default="UTC", validators=[validate_timezone])

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.name


class User(AbstractUser):
    class Role(models.TextChoices):
        LAWYER = "lawyer", "Lawyer"
        ADMIN = "admin", "Firm admin"

    # Null only for platform operators (superusers) who belong to no firm.
    firm = models.ForeignKey(Firm, null=True, blank=True, on_delete=models.CASCADE, related_name="users")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.LAWYER)
    name = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["username"]

    @property
    def is_firm_admin(self) -> bool:
        return self.firm_id is not None and self.role == self.Role.ADMIN

    def __str__(self) -> str:
        return self.name or self.username

"""The third host: the smallest product a firm might plug the memory into.

`Chambers` (known by its `handle`), `Counsel` (the user model), `Matter`
(`file_no`, `caption`, an `instructing_lawyer`, the client held as a plain
name, no party model) and `Paper`, what is filed on a matter. No
django-guardian, no teams, no counterparties: one lawyer instructs a matter,
and the head of chambers may open all of them.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import AbstractUser
from django.db import models
from django.utils import timezone


class Chambers(models.Model):
    handle = models.SlugField(unique=True)
    name = models.CharField(max_length=200)

    class Meta:
        verbose_name_plural = "chambers"

    def __str__(self) -> str:
        return self.name


class Counsel(AbstractUser):
    # Null only for platform staff, who belong to no chambers.
    chambers = models.ForeignKey(Chambers, null=True, blank=True, on_delete=models.CASCADE, related_name="counsel")
    display_name = models.CharField(max_length=200, blank=True)
    head_of_chambers = models.BooleanField(default=False)

    class Meta:
        verbose_name_plural = "counsel"

    def __str__(self) -> str:
        return self.display_name or self.username


class Matter(models.Model):
    chambers = models.ForeignKey(Chambers, on_delete=models.CASCADE, related_name="matters")
    file_no = models.CharField(max_length=30)
    caption = models.CharField(max_length=300)
    instructing_lawyer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="matters")
    client = models.CharField(max_length=300, blank=True, help_text="The client's name, as written.")
    opened = models.DateField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.file_no} {self.caption}"


class Paper(models.Model):
    matter = models.ForeignKey(Matter, on_delete=models.CASCADE, related_name="papers")
    title = models.CharField(max_length=300)
    body = models.TextField(blank=True)
    filed_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return self.title

"""Fixtures of the third host's suite: one set of chambers, two lawyers, its head, an operator.

This suite runs on its own (`--ds=tests.third_host.settings --confcutdir=tests/third_host`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import pytest

if os.environ.get("DJANGO_SETTINGS_MODULE") != "tests.third_host.settings":
    raise pytest.UsageError(
        "tests/third_host runs under its own settings: make test, or "
        "python -m pytest tests/third_host --ds=tests.third_host.settings --confcutdir=tests/third_host"
    )

from tests.third_host.chambers.models import Chambers, Counsel


@dataclass
class People:
    chambers: Chambers
    alice: Counsel  # instructed on her own matters
    bob: Counsel  # same chambers, none of alice's matters
    head: Counsel  # head of chambers: may open every matter, signs in to admin
    operator: Counsel  # platform superuser, no chambers


@pytest.fixture
def people(db: None) -> People:
    chambers = Chambers.objects.create(handle="temple-row", name="Temple Row Chambers")
    other = Chambers.objects.create(handle="grays-yard", name="Grays Yard Chambers")
    Counsel.objects.create(username="carol", display_name="Carol Other", chambers=other, head_of_chambers=True)
    return People(
        chambers=chambers,
        alice=Counsel.objects.create(username="alice", display_name="Alice Ashdown", chambers=chambers),
        bob=Counsel.objects.create(username="bob", display_name="Bob Brandt", chambers=chambers),
        head=Counsel.objects.create(
            username="head", display_name="Hana Head", chambers=chambers, head_of_chambers=True, is_staff=True
        ),
        operator=Counsel.objects.create_superuser(username="operator", password="x"),
    )

"""Django's `TextChoices`, and what a type checker is told it is.

Django ships no type hints, and mypy runs here without django-stubs (pyproject.toml says
why), so to mypy `models.TextChoices` is Any and a member written `DONE = "done", "Done"`
reads as a tuple, not the str it is. Under TYPE_CHECKING this module names a str enum
carrying Django's extras (`label`, `choices`, `values`, `labels`) instead, as django-stubs
would; at run time it is Django's own class, so the models and their migrations are unchanged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import enum
    from typing import ClassVar

    class TextChoices(enum.StrEnum):
        choices: ClassVar[list[tuple[str, str]]]
        values: ClassVar[list[str]]
        labels: ClassVar[list[str]]

        @property
        def value(self) -> str: ...  # a member is written `NAME = value, label`

        @property
        def label(self) -> str: ...

else:
    from django.db.models import TextChoices

__all__ = ["TextChoices"]

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from graph_memory.api.authentication import api_token


class Command(BaseCommand):
    help = (
        "Print the API token the assistant uses to call the memory on USER's behalf (USER: the user model's "
        "USERNAME_FIELD); the same one each time, --rotate: a new one, and the old one stops working."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username", metavar="USER")
        parser.add_argument(
            "--rotate", action="store_true", help="Replace the user's token with a new one; the old one stops working."
        )

    def handle(self, *args: Any, username: str, rotate: bool = False, **options: Any) -> None:
        if not apps.is_installed("rest_framework.authtoken"):
            raise CommandError('tokens need DRF\'s token app: add "rest_framework.authtoken" to INSTALLED_APPS, then migrate')
        User = get_user_model()
        user = User._default_manager.filter(**{User.USERNAME_FIELD: username, "is_active": True}).first()
        if user is None:
            raise CommandError(f"no active user named {username!r} ({User._meta.label}.{User.USERNAME_FIELD})")
        self.stdout.write(api_token(user, rotate=rotate))

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from rest_framework.authtoken.models import Token


class Command(BaseCommand):
    help = "Print the API token the assistant uses to call the memory API on USERNAME's behalf (--rotate: a new one)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument(
            "--rotate", action="store_true", help="Replace the user's token with a new one; the old one stops working."
        )

    def handle(self, *args: Any, username: str, rotate: bool = False, **options: Any) -> None:
        user = get_user_model().objects.filter(username=username, is_active=True).first()
        if user is None:
            raise CommandError(f"no active user named {username!r}")
        with transaction.atomic():
            if rotate:
                Token.objects.filter(user=user).delete()
            token, _ = Token.objects.get_or_create(user=user)
        self.stdout.write(token.key)

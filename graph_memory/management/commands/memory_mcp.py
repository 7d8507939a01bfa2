from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser


class Command(BaseCommand):
    help = (
        "Serve the assistant's memory tools over MCP on stdin/stdout, as USERNAME: the tools see exactly what "
        "that user's API token sees. For an MCP client on the user's own machine (it starts this command)."
    )
    # stdout is the protocol's wire: system check findings go to stderr, and
    # while serving the SDK points fd 1 at stderr so stray output misses the wire.

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", required=True, help="the username the tools act for")

    def handle(self, *args: Any, user: str, **options: Any) -> None:
        model = get_user_model()
        viewer = model.objects.filter(**{model.USERNAME_FIELD: user}, is_active=True).first()
        if viewer is None:
            raise CommandError(f"no active user named {user!r}")
        # Imported here, so that without the MCP SDK (an optional extra) the command says what to install.
        try:
            from graph_memory.api import mcp_server
        except ModuleNotFoundError as exc:
            raise CommandError(f"memory_mcp needs the MCP SDK ({exc}): pip install 'graph-memory-layer[mcp]'") from exc
        mcp_server.run_stdio(viewer)

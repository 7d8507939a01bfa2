"""The reference host's name for the memory's `memory_token` command, kept for its docs and scripts."""

from __future__ import annotations

from graph_memory.management.commands import memory_token


class Command(memory_token.Command):
    help = memory_token.Command.help + " (The memory's own command is memory_token; this is the same.)"

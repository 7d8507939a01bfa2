"""Receivers on the host's models (connected through `source`). They only flag or enqueue."""

from __future__ import annotations

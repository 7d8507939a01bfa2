"""Celery tasks: thin, idempotent, ids in, one service call each."""

from __future__ import annotations

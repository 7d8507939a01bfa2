"""PostgreSQL's wrapper under another vendor name: what the E031 check sees of a non-PostgreSQL ENGINE.

Only its class is loaded (the check reads settings, never connects), so the
suite needs no second database engine installed.
"""

from __future__ import annotations

from django.db.backends.postgresql import base


class DatabaseWrapper(base.DatabaseWrapper):
    vendor = "othervendor"

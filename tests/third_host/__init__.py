"""A third, minimal host project (issue 29's host trial): run on its own, like the second host.

    python -m pytest tests/third_host --ds=tests.third_host.settings --confcutdir=tests/third_host

`make test` runs it against the installed wheel (tests/installed_hosts.py).
"""

from __future__ import annotations

from tests.third_host.celery import app as celery_app

__all__ = ["celery_app"]

"""A second host product, differently shaped from `practice`, that plugs the memory in through settings and its adapter only.

Its own settings (tests/second_host/settings.py), URLs and apps: `offices`
(the firm model `LawOffice`, named on the command line by `code`, and the user
model `Attorney`) and `matters` (`Matter`, `Party` + `Engagement`,
`Assignment`, `Filing` + `FilingPage`, `TimeEntry` + `Bill`, `Memo`,
`DueDate`, and `matters/memory_adapter.py`). Its suite runs apart from the
main one: `make test` runs both.
"""

from __future__ import annotations

from tests.second_host.celery import app as celery_app

__all__ = ["celery_app"]

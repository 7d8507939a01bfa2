"""A nightly worker that dies between the rewrite and the commit (run by tests/contracts/test_faults.py).

    python tests/fault_worker.py TEST_DATABASE_NAME FIRM_ID

Runs the real `refresh_firm` against the test database; once the summary
row has been updated inside the save's transaction, it prints one line and
hangs there, so the test can kill the process at exactly that point.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django

django.setup()

from django.db import connection  # noqa: E402


def main(database: str, firm_id: int) -> None:
    connection.settings_dict["NAME"] = database  # not yet connected: the test's database, not the real one
    from graph_memory import services
    from graph_memory.models import SummaryVersion

    def hang(**kwargs: Any) -> None:
        print("rewritten, not committed", flush=True)
        time.sleep(600)

    SummaryVersion.objects.create = hang  # type: ignore[method-assign]
    services.refresh_firm(firm_id=firm_id)
    print("finished without being killed", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))

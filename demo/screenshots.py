"""`make screenshots`: every admin page of the demo as dana (its firm admin), drawn by headless Chromium.

Prepares the demo as `make demo` does (demo/run.py), starts the server on a free local port, signs dana in
(a session made here, its cookie handed to the browser) and draws each page `tests/admin_walk.py` names,
1400 px wide and as tall as the page, into .run/screenshots/ (ignored by git) with an index.html to look
through them. Chromium is driven over its DevTools pipe (`--remote-debugging-pipe`: JSON messages on file
descriptors 3 and 4), so nothing beyond the browser is installed. Not part of `make test`.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from demo import run  # noqa: E402  (sets Django up, as `make demo` does)

OUT = ROOT / ".run" / "screenshots"
WIDTH, HEIGHT_MAX = 1400, 12_000
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


class Browser:
    """Headless Chromium over --remote-debugging-pipe: commands on its fd 3, answers and events on its fd 4."""

    def __init__(self, executable: str) -> None:
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def wire() -> None:  # in the child: the pipe's ends where Chromium expects them
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        self._profile = tempfile.mkdtemp(prefix="gm-chromium-")
        self.process = subprocess.Popen(
            [executable, "--headless=new", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
             "--no-first-run", "--hide-scrollbars", f"--user-data-dir={self._profile}", "about:blank"],
            preexec_fn=wire, close_fds=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._next_id, self._buffer, self.session = 0, b"", None

    def call(self, method: str, params: dict[str, Any] | None = None, *, wait_for: str = "") -> dict[str, Any]:
        """Send one command; return its result (after the event `wait_for`, when given, has arrived too)."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if self.session:
            message["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        result, waited = None, not wait_for
        while result is None or not waited:
            reply = self._read()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                result = reply.get("result", {})
            elif reply.get("method") == wait_for:
                waited = True
        return result

    def _read(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed its pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)
        shutil.rmtree(self._profile, ignore_errors=True)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def main() -> None:
    executable = os.environ.get("CHROMIUM") or next(filter(None, map(shutil.which, BROWSERS)), None)
    if executable is None:
        sys.exit("No Chromium found: install it (Debian: apt-get install chromium) or set CHROMIUM=/path/to/it.")
    run.prepare()
    from django.test import Client

    from accounts.models import User
    from tests.admin_walk import admin_pages

    dana = User.objects.get(username="dana")
    session = Client()
    session.force_login(dana)
    pages = admin_pages(dana)
    port = free_port()
    host = f"127.0.0.1:{port}"
    server = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "config.asgi:application", "--host", "127.0.0.1", "--port", str(port),
         "--log-level", "warning"], cwd=ROOT, env={**os.environ, "DJANGO_DEBUG": "1"},
    )  # fmt: skip
    browser = Browser(executable)
    try:
        for _ in range(150):
            try:
                urllib.request.urlopen(f"http://{host}/healthz", timeout=2)
                break
            except OSError:
                time.sleep(0.2)
        target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        browser.session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        browser.call("Page.enable")
        browser.call("Network.setCookie", {"name": "sessionid", "value": session.cookies["sessionid"].value,
                                           "domain": "127.0.0.1", "path": "/"})  # fmt: skip
        browser.call("Emulation.setDeviceMetricsOverride",
                     {"width": WIDTH, "height": 900, "deviceScaleFactor": 1, "mobile": False})  # fmt: skip
        shutil.rmtree(OUT, ignore_errors=True)
        OUT.mkdir(parents=True)
        step(f"Drawing {len(pages)} admin pages as dana into {OUT.relative_to(ROOT)}/")
        for name, url in pages:
            browser.call("Page.navigate", {"url": f"http://{host}{url}"}, wait_for="Page.loadEventFired")
            size = browser.call("Page.getLayoutMetrics")["cssContentSize"]
            height = min(int(size["height"]) + 1, HEIGHT_MAX)
            shot = browser.call("Page.captureScreenshot", {
                "format": "png", "captureBeyondViewport": True,
                "clip": {"x": 0, "y": 0, "width": WIDTH, "height": height, "scale": 1},
            })  # fmt: skip
            (OUT / f"{name}.png").write_bytes(base64.b64decode(shot["data"]))
            done(f"{name}.png  {url}")
        items = "".join(f'<li><a href="{n}.png">{n}</a> <code>{u}</code></li>' for n, u in pages)
        (OUT / "index.html").write_text(f"<!doctype html><title>Admin as dana</title><ol>{items}</ol>\n")
        done(f"index: {(OUT / 'index.html').relative_to(ROOT)}")
    finally:
        browser.close()
        server.terminate()
        server.wait(timeout=10)


step, done = run.step, run.done

if __name__ == "__main__":
    main()

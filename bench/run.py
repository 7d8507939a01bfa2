"""`make bench`: run every bench/bench_*.py and write their sections to docs/BENCHMARKS.md.

Each benchmark works in a scratch database of its own on the embedded server
and prints one markdown section; this runner adds the machine and the date.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "BENCHMARKS.md"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def memory_gib() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                return f"{int(line.split()[1]) / 1024 / 1024:.0f} GiB"
    except OSError:
        pass
    return "unknown"


def replace_sections(text: str, sections: list[str]) -> str:
    """`text` with each section (a markdown block opening with its "## " heading) replaced, or appended."""
    for section in sections:
        heading = section.splitlines()[0]
        pattern = re.compile(rf"^{re.escape(heading)}\n.*?(?=^## |\Z)", re.S | re.M)
        if pattern.search(text):
            text = pattern.sub(lambda _, section=section: section + "\n\n", text, count=1)
        else:
            text = text.rstrip() + "\n\n" + section + "\n"
    return text.rstrip() + "\n"


def main() -> None:
    # `bench/run.py bench_x bench_y --write` runs only those and replaces just their sections in the file.
    write_partial = "--write" in sys.argv[1:]
    only = [arg for arg in sys.argv[1:] if arg != "--write"]
    scripts = sorted(p for p in (ROOT / "bench").glob("bench_*.py") if not only or p.stem in only)
    sections = []
    for script in scripts:
        print(f"running {script.name} ...", flush=True)
        done = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, env=os.environ)
        if done.returncode != 0:
            sys.stderr.write(done.stderr[-4000:])
            sys.exit(f"{script.name} failed (exit {done.returncode}); docs/BENCHMARKS.md left as it was")
        sections.append(done.stdout.strip())
        print(done.stdout.strip() + "\n", flush=True)
    if only and write_partial:
        OUT.write_text(replace_sections(OUT.read_text() if OUT.exists() else "# Benchmarks\n", sections))
        print(f"replaced {len(sections)} section(s) of {OUT.relative_to(ROOT)}; each carries its own date and machine")
        return
    if only:
        print("(a partial run: docs/BENCHMARKS.md is written only when every benchmark runs, or with --write)")
        return
    header = (
        "# Benchmarks\n\n"
        f"Measured by `make bench` on {dt.date.today().isoformat()}: {os.cpu_count()} cores ({cpu_model()}), "
        f"{memory_gib()} memory, Python {platform.python_version()}, embedded PostgreSQL 18 + pgvector 0.8.\n"
        "Every figure below was printed by the benchmark scripts in `bench/`; none is typed by hand.\n"
    )
    # Sections no script here prints (the real-model check from `make model-check`) are kept.
    kept = OUT.read_text() if OUT.exists() else ""
    kept = kept[kept.index("\n## ") + 1 :] if "\n## " in kept else ""
    OUT.write_text(replace_sections(header + "\n" + kept, sections))
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

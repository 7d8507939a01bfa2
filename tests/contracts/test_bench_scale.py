"""bench/bench_scale.py's smoke size runs end to end and prints the section docs/BENCHMARKS.md takes (issue 28).

The full run (a 50,000-case firm beside 20 firms, `make bench-scale`) is a benchmark, not a test; this
runs `--small` in databases of its own, dropped after, and checks the shape of what it reports.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.scale_measure import CHANGE_REPEATS, CLASSES, READS, REBUILD_REPEATS

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_small_run_reports_every_read_of_every_class_and_the_goal(tmp_path: Path) -> None:
    figures_file = tmp_path / "scale.json"
    env = {**os.environ, "BENCH_DB_SUFFIX": f"_pytest{os.getpid()}"}
    done = subprocess.run(
        [sys.executable, "bench/bench_scale.py", "--small", "--drop", "--json", str(figures_file)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    section, figures = done.stdout, json.loads(figures_file.read_text())

    assert section.startswith("## Scale: a 1,200-case firm beside 2 firms of 200 cases\n")
    goal = [
        line for line in section.splitlines() if line.startswith("| ") and line.endswith(("| met |", "| **not met** |"))
    ]
    for cls in CLASSES:
        for row in ("every read p50", "every read p95", "whole search", "recall@10", "beside ÷ alone"):
            assert sum(line.startswith(f"| {cls}: {row}") for line in goal) == 1, (cls, row)
    assert any("per-viewer state" in line for line in goal) and any("waits on a rebuild" in line for line in goal)

    times = figures["reads"]["times"]
    for read in READS:
        for cls in CLASSES:
            for where in ("alone", "beside"):
                assert times[f"{read}|{cls}|{where}"]["n"] == figures["samples"], (read, cls, where)
            paired = figures["reads"]["paired"][f"{read}|{cls}"]
            assert paired["n"] == figures["samples"] and paired["p50"] > 0, (read, cls)
            assert any(line.startswith(f"| {read} | {cls} |") and line.endswith(f"| {paired['p50']:.2f} |")
                       for line in section.splitlines()), (read, cls)  # fmt: skip
    assert {key.split("|")[1] for key in figures["reads"]["recall"]} == {"this app", *figures["peers"]}
    assert set(figures["reads"]["meaning_hits_outside_exact_top10"]) == set(CLASSES)
    storage = figures["storage"]["beside"]
    assert storage["summaries_bytes"] > 0 and "graph_memory_casesummary" in storage["tables"]
    assert len(figures["changes"]) == 6
    for change in figures["changes"]:
        # Each repeated on other rows, as many times as there are (up to the cap; a membership by another
        # associate each time, so as often as the cap); the firm's rebuild fewer.
        wanted = REBUILD_REPEATS if change["audience"] == "nobody" else CHANGE_REPEATS
        assert 3 <= change["repeats"] <= wanted
        if change["change"].startswith("group membership"):
            assert change["repeats"] == min(CHANGE_REPEATS, figures["run"]["scale_params"]["associates"])
        assert change["paired"] > 0
        for where in ("alone", "beside"):
            assert len(change[where]["ms_all"]) == change["repeats"]
            assert set(change[where]["first_reads"]) == set(CLASSES)

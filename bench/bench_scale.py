"""Reads that hold at big-law scale (issue 28): every viewer read, for every class of viewer, in the goal's database.

One firm of 50,000 cases and 500 lawyers (associates, practice-group members, partners, firm
admins; bench/scale_world.py) beside 20 firms of 2,000 cases ("beside"), and the same firm in a
database of its own ("alone"). Every read goes through the app's public functions, interleaved over
both databases and every class, and search also against a plain pgvector hybrid search
(bench/scale_peer.py). Then the size of every memory table, and the cost of one case change and of
one grant, with each class's first read after it. Prints one markdown section on stdout (progress
on stderr); `--write` puts it in docs/BENCHMARKS.md, `--json PATH` writes the figures.

    python bench/bench_scale.py [--small] [--reuse] [--write] [--json PATH] [--drop] [--keep] [--render PATH]

`--small`: a smoke run for CI (a 1,200-case firm beside two of 200; about half a minute). `--reuse`:
measure on the kept template databases when the code that generated them is unchanged (generating the
full one took 24 minutes on 2 shared cores, measuring 12). `--drop`: drop the templates at the end.
`--keep`: keep the working copies (to EXPLAIN afterwards). `--render PATH`: the section of a run's
figures (`--json`), measuring nothing.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import scale_world as world  # noqa: E402
from bench.scratch import progress  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag in ("--small", "--reuse", "--write", "--drop", "--keep"):
        parser.add_argument(flag, action="store_true")
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    parser.add_argument(
        "--render", type=Path, help="print (and --write) the section of figures a run wrote, measuring nothing"
    )
    args = parser.parse_args()
    if args.render:
        figures = json.loads(args.render.read_text())
        made = figures["run"].get("scale_params")
        scale = world.Scale(**made) if made else world.SMALL if figures["run"]["scale"] == "small" else world.FULL
        return report(scale, figures, write=args.write and scale.name == "full")
    if args.write and args.small:
        parser.error("--write takes a full run's figures only")
    scale = world.SMALL if args.small else world.FULL
    # Query vectors are given; no model call anywhere (the document answers route offline).
    os.environ.update(GRAPH_MEMORY_EMBEDDER="none", GRAPH_MEMORY_WRITER="extractive")
    os.environ.pop("OPENAI_API_KEY", None)
    os.environ.setdefault("GRAPH_MEMORY_LOG_LEVEL", "WARNING")  # no line per sight rebuilt or map built
    os.environ["DATABASE_URL_ADMIN"] = world.admin_url()
    names = world.database_names(scale)
    os.environ["DATABASE_URL"] = urlunsplit(
        urlsplit(os.environ["DATABASE_URL_ADMIN"])._replace(path=f"/{names['alone_tpl']}")
    )
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    load_before, started = os.getloadavg()[0], time.perf_counter()
    notes = [world.template_note(names[k]) for k in ("alone_tpl", "beside_tpl")]
    reused = bool(
        args.reuse and notes[0] and notes[0] == notes[1] and notes[0]["fingerprint"] == world.fingerprint(scale)
    )
    if reused:
        progress(f"reusing the templates generated {notes[0]['generated']}")
        note = notes[0]
    else:
        progress(f"generating the {scale.name} world (templates {names['alone_tpl']}, {names['beside_tpl']}) ...")
        note = world.generate(scale, progress)
        progress(f"generated in {note['total_seconds'] / 60:.1f} min")
    measure_started = t0 = time.perf_counter()
    for copy in ("alone", "beside"):
        world.create(names[copy], template=names[f"{copy}_tpl"])
    copy_s = time.perf_counter() - t0
    try:
        from bench import scale_measure

        figures = scale_measure.run(scale, names, progress)
    finally:
        from django.db import connections

        connections.close_all()
        for copy in ("alone", "beside"):
            if not args.keep:
                world.drop(names[copy])
        if args.drop:
            for copy in ("alone_tpl", "beside_tpl"):
                world.drop(names[copy])
    figures["run"] = {
        "scale": scale.name, "scale_params": asdict(scale), "reused": reused, "template": note, "copy_seconds": round(copy_s, 1),
        "seconds": round(time.perf_counter() - started, 1), "load_before": load_before,
        "measure_seconds": round(time.perf_counter() - measure_started, 1),
        "load_after": os.getloadavg()[0], "date": dt.date.today().isoformat(),
    }  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1, default=str))
    report(scale, figures, write=args.write)


def report(scale: world.Scale, figures: dict[str, Any], *, write: bool) -> None:
    """Print the section; with `write`, replace it in docs/BENCHMARKS.md (as `bench/run.py --write` does)."""
    from bench import scale_report

    section = scale_report.section(scale, figures)
    print(section)
    if write:
        from bench.run import OUT, replace_sections

        OUT.write_text(replace_sections(OUT.read_text() if OUT.exists() else "# Benchmarks\n", [section]))
        progress(f"replaced the section in {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

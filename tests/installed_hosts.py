"""The second and third hosts' suites against the installed wheel, as a host would have the app: `make test` runs it.

    .venv/bin/python -m tests.installed_hosts [--keep] [--only third_host] [-- pytest args]

1. Builds the wheel from a clean copy of what the distribution is made of
   (`pyproject.toml`, `README.md`, `graph_memory/`), with no build isolation:
   nothing is downloaded.
2. Makes a fresh virtualenv and installs the wheel alone into it. Its
   dependencies are the ones this (the dev) environment already holds, reached
   through a `.pth` file: `--system-site-packages` would give the base
   interpreter's packages, not this virtualenv's, and installing them again
   would take minutes (torch). `pip check` then proves the wheel's declared
   dependencies are met by them.
3. Copies the hosts (`tests/second_host`, `tests/third_host` and the support
   modules beside them) to a directory of their own and runs each suite there,
   with the installed interpreter and the source tree off `sys.path`; the
   second host's `test_installed.py` asserts that `graph_memory` is the
   installed package and that it holds every file of the source package.

Either suite failing (or collecting nothing) fails the run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOSTS = ("second_host", "third_host")


def build_wheel(workdir: Path) -> Path:
    """Build the distribution's wheel in `workdir` (from a copy, so nothing is written into the source tree)."""
    source = workdir / "source"
    shutil.copytree(ROOT / "graph_memory", source / "graph_memory", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
         "--wheel-dir", str(workdir / "dist"), str(source)],
        check=True,
    )  # fmt: skip
    [wheel] = (workdir / "dist").glob("graph_memory_layer-*.whl")
    return wheel


def install(wheel: Path, venv: Path) -> Path:
    """A fresh virtualenv with the wheel installed; returns its interpreter."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], check=True, capture_output=True, text=True
    ).stdout.strip()
    # After the virtualenv's own site-packages on sys.path, so the installed graph_memory comes first.
    dependencies = sysconfig.get_path("purelib")
    (Path(purelib) / "_dev_dependencies.pth").write_text(f"import site; site.addsitedir({dependencies!r})\n")
    pip = [sys.executable, "-m", "pip", "--python", str(python)]
    subprocess.run([*pip, "install", "--quiet", "--no-deps", "--no-index", str(wheel)], check=True)
    subprocess.run([*pip, "check"], check=True, stdout=subprocess.DEVNULL)
    return python


def copy_hosts(workdir: Path) -> Path:
    """The hosts and the support modules beside them, in a directory of their own; returns it."""
    hosts = workdir / "hosts"
    (hosts / "tests").mkdir(parents=True)
    for module in (ROOT / "tests").glob("*.py"):
        if not module.name.startswith("test_") and module.name != "conftest.py":
            shutil.copy2(module, hosts / "tests" / module.name)
    for name in HOSTS:
        shutil.copytree(ROOT / "tests" / name, hosts / "tests" / name, ignore=shutil.ignore_patterns("__pycache__"))
    # pytest's own settings ([tool.pytest.ini_options]: markers, warning filters); nothing else of it is read there.
    shutil.copy2(ROOT / "pyproject.toml", hosts / "pyproject.toml")
    # The host developers' tutorial, which the second host's suite checks against its adapter.
    (hosts / "docs").mkdir()
    shutil.copy2(ROOT / "docs" / "host-developers.md", hosts / "docs" / "host-developers.md")
    return hosts


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep the build, the virtualenv and the hosts' copy")
    parser.add_argument("--only", choices=HOSTS, action="append", help="run this host's suite only")
    parser.add_argument("pytest_args", nargs="*", help="passed to pytest (after --)")
    options = parser.parse_args(argv)
    # Outside the repository, before the embedded server points TMPDIR into it: pytest-django puts the
    # directory of the nearest manage.py above the tests on sys.path, and that must not be the source tree's.
    workdir = Path(tempfile.mkdtemp(prefix="graph-memory-installed-"))
    if workdir.resolve().is_relative_to(ROOT):
        raise SystemExit(f"{workdir} is inside {ROOT}: set TMPDIR to a directory outside it")
    from tests.scratch_db import server_url  # the repository's own helper: the hosts' database server

    started = time.monotonic()
    try:
        env = {**os.environ, "DATABASE_URL": server_url()}
        env.pop("PYTHONPATH", None)
        wheel = build_wheel(workdir)
        venv = workdir / "venv"
        python = install(wheel, venv)
        hosts = copy_hosts(workdir)
        print(f"installed {wheel.name} into {venv} in {time.monotonic() - started:.1f}s; the hosts run from {hosts}")
        env |= {"GRAPH_MEMORY_INSTALLED_IN": str(venv), "GRAPH_MEMORY_SOURCE": str(ROOT / "graph_memory")}
        failed = []
        for name in options.only or HOSTS:
            suite = [f"tests/{name}", f"--ds=tests.{name}.settings", f"--confcutdir=tests/{name}", "-p", "no:cacheprovider"]
            code = subprocess.run([python, "-m", "pytest", *suite, *options.pytest_args], cwd=hosts, env=env).returncode
            if code != 0:
                failed.append(f"{name}(exit {code})")
    finally:
        if options.keep:
            print(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    if failed:
        print(f"installed hosts failed: {' '.join(failed)} (exit 5: no tests collected)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

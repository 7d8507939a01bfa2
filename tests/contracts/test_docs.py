"""The docs say what the code does: the settings page is generated from conf.py and current, every
setting is documented, every piece of code a page quotes exists, and the README stays short."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from graph_memory import conf
from graph_memory.adapter import MemoryAdapter

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def docs_module(name: str) -> ModuleType:
    """docs/<name>.py, which is no package: loaded by path, as mkdocs loads its hook."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, DOCS / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def includes() -> list[tuple[str, str, str]]:
    """(page, path, name) of every `--8<-- "path:name"` line of the docs."""
    pattern = docs_module("hooks").INCLUDE
    return [
        (page.name, match["path"], match["name"])
        for page in sorted(DOCS.glob("*.md"))
        for match in pattern.finditer(page.read_text())
    ]


def test_the_settings_page_is_generated_from_conf_and_current() -> None:
    reference = docs_module("settings_reference")
    assert (DOCS / "settings.md").read_text() == reference.render(), "run `make docs-settings`"


def test_every_setting_has_its_own_comment_and_row() -> None:
    reference = docs_module("settings_reference")
    documented = [s.key for section in reference.sections() for s in section.settings]
    assert documented == list(conf.DEFAULTS)
    page = (DOCS / "settings.md").read_text()
    assert all(f'<a id="{key}"></a>`{key}`' in page for key in conf.DEFAULTS)


def test_a_setting_without_a_comment_fails_the_page() -> None:
    reference = docs_module("settings_reference")
    source = """DEFAULTS = {\n    # --- Reads ---\n    # Documented.\n    "PAGE_MAX": 100,\n    "QUERY_MAX_CHARS": 500,\n}\n"""
    with pytest.raises(reference.SettingUndocumented, match="QUERY_MAX_CHARS"):
        reference.sections(source)


def test_every_quoted_definition_exists() -> None:
    hooks = docs_module("hooks")
    quoted = includes()
    assert len(quoted) > 30
    for page, path, name in quoted:
        assert hooks.definition_source(path, name), (page, path, name)
    with pytest.raises(LookupError, match=r"defines no MattersMemoryAdapter\.live_facts_of_old"):
        hooks.definition_source("tests/second_host/matters/memory_adapter.py", "MattersMemoryAdapter.live_facts_of_old")


def test_the_tutorial_teaches_every_adapter_method_a_host_must_write_and_no_other() -> None:
    taught = {
        name.partition(".")[2]
        for page, path, name in includes()
        if page == "host-developers.md" and name.startswith(("MattersMemoryAdapter.", "PracticeMemoryAdapter."))
    }
    hooks = docs_module("hooks")
    required = {
        name
        for name, member in vars(MemoryAdapter).items()
        if callable(member)
        and "raise NotImplementedError" in hooks.definition_source("graph_memory/adapter.py", f"MemoryAdapter.{name}")
    }
    assert required - taught == set()
    assert {name for name in taught if not hasattr(MemoryAdapter, name)} == set()


def test_the_readme_is_short() -> None:
    assert len((ROOT / "README.md").read_bytes()) <= 10_240


def test_the_readme_links_to_pages_and_headings_that_exist() -> None:
    from markdown.extensions.toc import slugify

    links = re.findall(r"\]\(((?:docs/|demo/)[^)#\s]+)(?:#([^)\s]+))?\)", (ROOT / "README.md").read_text())
    assert len(links) > 10
    for path, anchor in links:
        assert (ROOT / path).is_file(), path
        if anchor:
            text = (ROOT / path).read_text()
            headings = re.findall(r"^#+ (.+)$", text, flags=re.M)
            named = set(re.findall(r'<a id="([^"]+)"></a>', text))  # an anchor set by hand inside a section
            assert anchor in {slugify(h.replace("`", ""), "-") for h in headings} | named, f"{path}#{anchor}"


def test_every_test_path_the_repository_names_exists() -> None:
    """A test file or folder named in a page, the Makefile, a benchmark or a comment is there: moving a
    test (tests/ mirrors graph_memory/'s folders) means moving what points at it."""
    sources = [
        ROOT / "README.md",
        ROOT / "Makefile",
        ROOT / "pyproject.toml",
        *DOCS.glob("*.md"),
        *DOCS.glob("*.py"),
        *(ROOT / "bench").glob("*.py"),
        *(ROOT / "demo").glob("*.py"),
        *(ROOT / "graph_memory").rglob("*.py"),
        *(ROOT / "tests").rglob("*.py"),
    ]
    named = {
        (source.relative_to(ROOT).as_posix(), match[0])
        for source in sources
        for match in re.finditer(r"(?<![\w/.])tests/(?:\w+/)*\w+(?:\.py|/)", source.read_text())
    }
    assert len(named) > 100
    assert {(source, path) for source, path in named if not (ROOT / path).exists()} == set()


def test_the_house_names_folders_and_files_that_exist() -> None:
    """docs/architecture.md draws the house: every folder and file of graph_memory/ it names exists, and every
    folder of graph_memory/ (but migrations, management, templates) is in its drawing."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    package = ROOT / "graph_memory"
    named = set(re.findall(r"\b([a-z_]+/)(?=[ `)(,]|$)", text, re.M)) | set(re.findall(r"graph_memory/([\w/]+\.py)", text))
    missing = sorted(
        name for name in named
        if not (package / name).exists() and not (ROOT / name).exists() and not any(package.glob(f"*/{name}"))
    )  # fmt: skip
    assert missing == []
    folders = {p.name + "/" for p in package.iterdir() if p.is_dir() and not p.name.startswith("__")}
    assert folders - {"migrations/", "management/", "templates/"} <= named

"""The settings reference (docs/settings.md), generated from graph_memory/conf.py so it cannot drift.

Each key of `conf.DEFAULTS` carries its own comment in conf.py, and `# --- Title ---` lines
split them into sections; the page is those comments, the defaults as conf.py computes
them and the environment variable that overrides each. A key without a comment is an
error, not a blank row.

    python docs/settings_reference.py           # write docs/settings.md
    python docs/settings_reference.py --check   # exit 1 if it is out of date (make docs, tests/contracts/test_docs.py)
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CONF = ROOT / "graph_memory" / "conf.py"
PAGE = ROOT / "docs" / "settings.md"
# A default longer than this is shown under its section's table, not in a cell.
LONG_DEFAULT = 60
_SECTION = re.compile(r"#\s*---\s*(.+?)\s*---\s*$")
_DOC_PAGE = re.compile(r"\bdocs/([\w-]+\.md)\b")


class SettingUndocumented(Exception):
    """A key of conf.DEFAULTS has no comment of its own in conf.py."""


@dataclass
class Setting:
    key: str
    comment: str


@dataclass
class Section:
    title: str
    settings: list[Setting] = field(default_factory=list)


def _defaults_dict(tree: ast.Module) -> ast.Dict:
    for node in tree.body:
        if isinstance(node, ast.AnnAssign | ast.Assign):
            targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
            if any(isinstance(t, ast.Name) and t.id == "DEFAULTS" for t in targets):
                assert isinstance(node.value, ast.Dict)
                return node.value
    raise LookupError(f"no DEFAULTS dict in {CONF}")


def sections(source: str | None = None) -> list[Section]:
    """conf.DEFAULTS's keys in source order, each with the comment lines right above it, by section."""
    source = CONF.read_text() if source is None else source
    lines = source.splitlines()
    found: list[Section] = []
    comment: list[str] = []
    block = _defaults_dict(ast.parse(source))
    previous_end = block.lineno  # the line of the opening brace
    for key_node, value_node in zip(block.keys, block.values, strict=True):
        assert isinstance(key_node, ast.Constant) and isinstance(key_node.value, str)
        for line in lines[previous_end : key_node.lineno - 1]:
            text = line.strip()
            if (title := _SECTION.fullmatch(text)) is not None:
                found.append(Section(title.group(1)))
                comment = []  # a note above a section title belongs to no key
            elif text.startswith("#"):
                comment.append(text.lstrip("#").strip())
        if not comment:
            raise SettingUndocumented(
                f"GRAPH_MEMORY[{key_node.value!r}] has no comment in graph_memory/conf.py: "
                "say what it does on the line above it"
            )
        if not found:
            raise SettingUndocumented(f"{key_node.value!r} comes before the first `# --- Title ---` line of DEFAULTS")
        found[-1].settings.append(Setting(key_node.value, " ".join(comment)))
        comment = []
        previous_end = value_node.end_lineno or value_node.lineno
    return found


def _literal(value: Any) -> str:
    """A default as it is written in a settings file (double quotes, as the docs write strings)."""
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_literal(k)}: {_literal(v)}" for k, v in value.items()) + "}"
    return repr(value)


def _prose(text: str) -> str:
    """A comment as Markdown table-cell text: `<` and `>` escaped outside code spans, docs/*.md linked; no pipes."""
    if "|" in text:
        raise ValueError(f"a settings comment may not hold '|' (it would split the table): {text!r}")
    parts = text.split("`")
    for i in range(0, len(parts), 2):  # even parts are outside code spans
        parts[i] = parts[i].replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        parts[i] = _DOC_PAGE.sub(r"[\1](\1)", parts[i])  # a page of this site: a link the strict build checks
    return "`".join(parts)


def _environment(conf: Any, key: str) -> str:
    if key in conf._BOOL_KEYS:
        kind = "1 or 0 (also true/false, yes/no, on/off)"
    elif key in conf._OPTIONAL_INT_KEYS:
        kind = "an integer; empty: None"
    elif key in conf._INT_KEYS:
        kind = "an integer"
    elif key in conf._FLOAT_KEYS:
        kind = "a number"
    else:
        kind = "text"
    return f"`GRAPH_MEMORY_{key}`: {kind}"


INTRO = """\
# Settings reference

<!-- Generated from graph_memory/conf.py by `make docs-settings` (docs/settings_reference.py): edit the
comments there, not this page. `make docs` and the tests fail when this page is out of date. -->

The app reads its settings in one module, `graph_memory/conf.py`, and nowhere else. This page is
generated from that module's comments and defaults, so it says what the code does.

A host sets the app's keys in one dict in its settings; a key left out takes its default:

```python
GRAPH_MEMORY = {
    "ADAPTER": "matters.memory_adapter.MattersMemoryAdapter",
    "THROTTLE_RATE": "300/min",
}
```

An environment variable `GRAPH_MEMORY_<KEY>` overrides both, read each time the setting is (handy
for the demo and CI); the table says how each is parsed. `manage.py check` validates the result:
each error names the setting and the check's id (`graph_memory.E0xx`); the
[operators' page](operators.md#system-checks) lists the checks.

## The host's models

Two top-level settings name the host's models, like `AUTH_USER_MODEL`: the app's foreign keys and
migrations follow them (`migrations.swappable_dependency`), so both models must be created in their
apps' first migration; set both before the first `migrate`, as with `AUTH_USER_MODEL`.

| setting | default | meaning |
| --- | --- | --- |
| `GRAPH_MEMORY_CASE_MODEL` | `"{case}"` | the host's case model, `"app_label.ModelName"` (a wrong one is E036) |
| `GRAPH_MEMORY_FIRM_MODEL` | `"{firm}"` | the host's firm model (a wrong one is E037) |

The defaults are the reference host's models in this repository.
"""


def render() -> str:
    """The whole page, as it must read for the conf.py of this checkout."""
    sys.path.insert(0, str(ROOT))
    try:
        from graph_memory import conf
    finally:
        sys.path.remove(str(ROOT))
    out = [INTRO.replace("{case}", conf.DEFAULT_CASE_MODEL).replace("{firm}", conf.DEFAULT_FIRM_MODEL)]
    out.append("## `GRAPH_MEMORY` keys\n")
    for section in sections():
        out.append(f"### {section.title}\n")
        out.append("| key | default | environment | meaning |")
        out.append("| --- | --- | --- | --- |")
        long_defaults = []
        for setting in section.settings:
            default = _literal(conf.DEFAULTS[setting.key])
            if len(default) > LONG_DEFAULT:
                long_defaults.append((setting.key, default))
                default = "below the table"
            else:
                default = f"`{default}`"
            name = f'<a id="{setting.key}"></a>`{setting.key}`'
            out.append(f"| {name} | {default} | {_environment(conf, setting.key)} | {_prose(setting.comment)} |")
        out.append("")
        for key, default in long_defaults:
            out.append(f"`{key}` by default:\n\n```python\n{default}\n```\n")
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str]) -> int:
    page = render()
    if "--check" in argv:
        if not PAGE.exists() or PAGE.read_text() != page:
            print(
                "docs/settings.md is out of date with graph_memory/conf.py: run `make docs-settings`", file=sys.stderr
            )
            return 1
        return 0
    PAGE.write_text(page)
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

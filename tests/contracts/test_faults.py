"""Nothing lost under faults: a model or embedder that fails, a worker that dies, a database that drops.

Every scenario starts from a case with a good summary and a change since
(stale), runs the real nightly refresh (`services.refresh_firm`) into the
fault, and checks what is left: the previous summary untouched, the flag
still up, the error recorded, no half-written history; then the next run
(the next night: backoff and leases moved into the past) repairs it.
The model and embedder are the real `openai` client over HTTP against the
local test server (tests/openai_server.py), or a port nobody listens on.
"""

from __future__ import annotations

import datetime as dt
import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.test import Client as HttpClient
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token

from accounts.models import User
from graph_memory import services
from graph_memory.models import AICall, CaseSummary, Node, RefreshRun, SummaryVersion
from graph_memory.summaries.base import max_output_tokens
from graph_memory.summaries.rulebook import empty_content
from graph_memory.summaries.writers import ExtractiveWriter
from graph_memory.vectors import embeddings
from graph_memory.viewer.briefs import NO_SUMMARY
from practice.models import Case
from tests.factories import CaseFactory, FirmFactory, NoteFactory, UserFactory
from tests.openai_server import OpenAIServer, Reply
from tests.refresh_support import SummarizeSpy, valid_reply

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def fault_settings(settings: Any) -> Any:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "WRITER": "openai", "EMBEDDER": "none", "OPENAI_MAX_RETRIES": 0, "OPENAI_TIMEOUT": 10.0}
    return settings


def dead_url() -> str:
    """The URL of a port nobody listens on (bound, then closed: connection refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def summarised_and_stale(server: OpenAIServer) -> tuple[Case, CaseSummary]:
    """A case with one good summary, then a new note: stale, waiting for tonight's rewrite."""
    case = CaseFactory(title="Harbour lease", description="Lease of the harbour warehouse.")
    server.add_chat(valid_reply())
    assert services.refresh_firm(firm_id=case.firm_id).rewritten == 1
    NoteFactory(case=case, text="The landlord proposed new terms.")
    previous = CaseSummary.objects.get(case=case)
    assert previous.text and previous.stale and SummaryVersion.objects.filter(case=case).count() == 1
    return case, previous


def assert_nothing_lost(previous: CaseSummary, *, error: str | None) -> CaseSummary:
    """The previous summary as it was, the flag up, and the error recorded (None: nobody lived to record one)."""
    now = CaseSummary.objects.get(pk=previous.pk)
    for name in ("text", "content", "writer", "written_at", "written_generation", "verification", "search_vector"):
        assert getattr(now, name) == getattr(previous, name), name
    assert (now.stale, now.stale_since, now.generation) == (True, previous.stale_since, previous.generation)
    if error is None:
        assert (now.attempts, now.last_error) == (previous.attempts, previous.last_error)
    else:
        assert error in now.last_error and now.attempts == previous.attempts + 1
    assert SummaryVersion.objects.filter(case_id=previous.case_id).count() == 1  # no half-written history
    return now


def next_night(case: Case) -> None:
    """Move the backoff (or a dead worker's lease) into the past, as the next night finds it."""
    CaseSummary.objects.filter(case=case).update(next_attempt_after=timezone.now() - dt.timedelta(seconds=1))


def assert_repaired(case: Case, previous: CaseSummary) -> None:
    now = CaseSummary.objects.get(case=case)
    assert (now.stale, now.attempts, now.last_error, now.next_attempt_after) == (False, 0, "", None)
    assert now.written_at > previous.written_at
    assert SummaryVersion.objects.filter(case=case).count() == 2


# A model that selects only sentences the slice does not have (its short form invents a date).
INVENTED = empty_content()
INVENTED["key_dates"] = [{"ids": ["s99"], "label": "", "short": "Completion is set for 3 March 2031."}]

MODEL_FAULTS = {
    "server down": (None, "connection error", AICall.Outcome.ERROR),
    "slow past the timeout": (Reply.slow(5.0, valid_reply()), "timeout", AICall.Outcome.ERROR),
    "HTTP 500": (Reply.error(500), "HTTP 500", AICall.Outcome.ERROR),
    "garbage text": (Reply.raw("<html>502 Bad Gateway</html>"), "malformed JSON", AICall.Outcome.ERROR),
    "garbage JSON": (Reply.json({"summary": "all good"}), "does not match the schema", AICall.Outcome.ERROR),
    "selects no sentence of the slice": (
        Reply.json(INVENTED), "no selected sentence is in the slice", AICall.Outcome.REJECTED,
    ),
    # A 200 whose body is not JSON at all (a proxy's page), with a JSON content type or with its own.
    "HTTP 200, body not JSON": (Reply.not_json(), "response not JSON", AICall.Outcome.ERROR),
    "HTTP 200, an HTML page": (Reply.not_json(content_type="text/html"), "response not JSON", AICall.Outcome.ERROR),
    "HTTP 200, JSON of another shape": (Reply(body={"choices": "none"}), "wrong shape", AICall.Outcome.ERROR),
    "nested deeper than the parser goes": (Reply.raw("[" * 3000 + "]" * 3000), "malformed JSON", AICall.Outcome.ERROR),
}


@pytest.mark.django_db
@pytest.mark.parametrize("fault", list(MODEL_FAULTS))
def test_a_failing_model_loses_nothing_and_the_next_run_retries(
    fault: str, openai_server: OpenAIServer, fault_settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    reply, error, outcome = MODEL_FAULTS[fault]
    fault_settings.GRAPH_MEMORY = {**fault_settings.GRAPH_MEMORY, "OPENAI_TIMEOUT": 0.5}
    case, previous = summarised_and_stale(openai_server)
    if reply is None:
        monkeypatch.setenv("OPENAI_BASE_URL", dead_url())
    else:
        openai_server.add_chat(reply)

    run = services.refresh_firm(firm_id=case.firm_id)

    assert (run.status, run.claimed, run.rewritten, run.failed) == ("done", 1, 0, 1)
    failed = assert_nothing_lost(previous, error=error)
    assert failed.next_attempt_after > timezone.now()  # backing off until the next night
    # Every call is logged, whatever came back: its outcome, the error and the response format asked for.
    call = AICall.objects.filter(case=case).order_by("-id").first()
    assert call is not None, "the call was not logged"
    assert (call.outcome, call.purpose, call.request_mode) == (outcome, AICall.Purpose.SUMMARY, "json_schema")
    assert error in call.error
    # Tonight's later runs leave it alone; the flag stays up.
    assert services.refresh_firm(firm_id=case.firm_id).claimed == 0
    assert CaseSummary.objects.get(case=case).stale

    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    openai_server.add_chat(valid_reply())
    next_night(case)
    retry = services.refresh_firm(firm_id=case.firm_id)
    assert (retry.status, retry.claimed, retry.rewritten) == ("done", 1, 1)
    assert_repaired(case, previous)


@pytest.mark.django_db
def test_a_first_summary_asked_for_while_the_model_is_down_answers_with_header_facts(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = CaseFactory(title="Quay repairs", description="Repairs to the north quay.")
    services.graph_rebuild_firm(firm_id=case.firm_id)
    monkeypatch.setenv("OPENAI_BASE_URL", dead_url())
    case_node = Node.objects.get(kind="case", ref_id=case.pk)
    brief = services.node_brief(viewer=case.owner, node_id=case_node.pk)
    assert brief.cases[0].summary == "" and NO_SUMMARY in brief.text and "Repairs to the north quay." in brief.text
    row = CaseSummary.objects.get(case=case)
    assert (row.text, row.stale, row.last_error, row.attempts) == ("", True, "connection error", 1)
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    openai_server.add_chat(valid_reply())
    assert services.refresh_firm(firm_id=case.firm_id).rewritten == 1  # not backing off: it was never claimed
    assert services.node_brief(viewer=case.owner, node_id=case_node.pk).cases[0].summary


# --- Embedder down ----------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("fault", ["server down", "HTTP 500"])
def test_an_embedder_that_is_down_costs_only_the_vector_until_the_next_run(
    fault: str, openai_server: OpenAIServer, fault_settings: Any, monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:  # fmt: skip
    # The summary writer needs no model here, so only the embedder meets the fault.
    fault_settings.GRAPH_MEMORY = {**fault_settings.GRAPH_MEMORY, "WRITER": "extractive", "EMBEDDER": "openai"}
    case = CaseFactory(title="Harbour lease", description="Lease of the harbour warehouse in Bremen.")
    services.graph_rebuild_firm(firm_id=case.firm_id)
    if fault == "server down":
        monkeypatch.setenv("OPENAI_BASE_URL", dead_url())
    else:
        openai_server.add_embeddings(*[Reply.error(500)] * 10)

    with django_capture_on_commit_callbacks(execute=True):  # the embedding is enqueued when the save commits
        run = services.refresh_firm(firm_id=case.firm_id)

    assert (run.status, run.rewritten, run.embedded) == ("done", 1, 0)
    row = CaseSummary.objects.get(case=case)
    assert row.text and not row.stale and (row.embedding, row.embedding_model) == (None, "")
    failed_calls = AICall.objects.filter(purpose=AICall.Purpose.EMBEDDING, outcome=AICall.Outcome.ERROR)
    assert failed_calls.count() >= 1
    found = services.search_cases(viewer=case.owner, q="harbour warehouse")
    assert found.mode == "keyword" and [h.case_id for h in found.results] == [case.pk]

    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    openai_server._embeddings.clear()  # the server recovers: its queued failures are dropped
    backfill = services.refresh_firm(firm_id=case.firm_id)
    assert (backfill.status, backfill.claimed, backfill.embedded) == ("done", 0, 1)
    row = CaseSummary.objects.get(case=case)
    assert row.embedding is not None and row.embedding_model.startswith("openai:")
    found = services.search_cases(viewer=case.owner, q="harbour warehouse")
    assert found.mode == "hybrid" and [h.case_id for h in found.results] == [case.pk]


# --- A worker dying between the rewrite and the commit --------------------------------------------


@pytest.mark.django_db
def test_an_exception_between_the_rewrite_and_the_commit_leaves_no_half_written_version(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    case, previous = summarised_and_stale(openai_server)
    openai_server.add_chat(valid_reply())

    def die(**kwargs: Any) -> None:
        raise RuntimeError("worker lost")  # after the summary row's UPDATE, inside the same transaction

    with monkeypatch.context() as patch:
        patch.setattr(SummaryVersion.objects, "create", die)
        run = services.refresh_firm(firm_id=case.firm_id)
    assert (run.status, run.claimed, run.rewritten, run.failed) == ("done", 1, 0, 1)
    assert_nothing_lost(previous, error="RuntimeError: worker lost")

    openai_server.add_chat(valid_reply())
    next_night(case)
    assert services.refresh_firm(firm_id=case.firm_id).rewritten == 1
    assert_repaired(case, previous)


@pytest.mark.django_db(transaction=True)
def test_a_worker_process_killed_between_the_rewrite_and_the_commit_loses_nothing(openai_server: OpenAIServer) -> None:
    case, previous = summarised_and_stale(openai_server)
    env = {**os.environ, "GRAPH_MEMORY_WRITER": "extractive", "GRAPH_MEMORY_EMBEDDER": "none", "PYTHONPATH": str(ROOT)}
    worker = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "fault_worker.py"), connection.settings_dict["NAME"], str(case.firm_id)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        line = _read_line(worker, timeout=60)
        assert line == "rewritten, not committed", worker.stderr.read() if worker.poll() is not None else line
        # Inside its transaction, the worker has already updated the summary row: kill it there.
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait(10)
    finally:
        if worker.poll() is None:
            worker.kill()
        worker.wait(10)

    row = assert_nothing_lost(previous, error=None)
    dead_run = RefreshRun.objects.filter(firm_id=case.firm_id).order_by("-id").first()
    assert (dead_run.status, dead_run.claimed) == ("running", 0)  # killed before it could count anything
    # The dead worker's lease keeps the case away from other workers until it expires.
    assert row.next_attempt_after > timezone.now() and dead_run.lease_until > timezone.now()
    assert services.refresh_firm(firm_id=case.firm_id).claimed == 0
    # Within its lease nobody can tell a dead worker from a slow one: the record stays "running".
    assert RefreshRun.objects.get(pk=dead_run.pk).status == RefreshRun.Status.RUNNING
    leases_run_out(case)
    openai_server.add_chat(valid_reply())
    assert services.refresh_firm(firm_id=case.firm_id).rewritten == 1
    assert_repaired(case, previous)
    # Past its lease, the firm's next run (that one) marked it: abandoned, and shown on the health page.
    dead = RefreshRun.objects.get(pk=dead_run.pk)
    assert (dead.status, dead.finished_at) == (RefreshRun.Status.ABANDONED, None) and "abandoned" in dead.error
    admin = UserFactory(firm=case.firm, role=User.Role.ADMIN)
    http = HttpClient()
    http.force_login(admin)
    page = http.get(reverse("admin:graph_memory_health")).content.decode()
    assert page.count('class="gm-abandoned-run"') == 1 and "Abandoned runs" in page


def leases_run_out(case: Case) -> None:
    """Time passes past every lease: the case's and its firm's running runs' (as next_night does for backoff)."""
    next_night(case)
    past = timezone.now() - dt.timedelta(seconds=1)
    RefreshRun.objects.filter(firm_id=case.firm_id, status=RefreshRun.Status.RUNNING).update(lease_until=past)


def _read_line(process: subprocess.Popen[str], *, timeout: float) -> str:
    """The next line the process prints, or "" if it prints none in time."""
    result: list[str] = []
    reader = threading.Thread(target=lambda: result.append(process.stdout.readline().strip()), daemon=True)
    reader.start()
    reader.join(timeout)
    return result[0] if result else ""


# --- The database connection dropping mid-run -----------------------------------------------------


class DroppingWriter(ExtractiveWriter):
    """Writes, and meanwhile another connection terminates the worker's database session."""

    def __init__(self, backend_pid: int) -> None:
        self.backend_pid = backend_pid

    def write(self, context: Any) -> Any:
        def terminate() -> None:
            try:
                with connection.cursor() as cursor:  # this thread's own connection
                    cursor.execute("SELECT pg_terminate_backend(%s)", [self.backend_pid])
            finally:
                connection.close()

        killer = threading.Thread(target=terminate)
        killer.start()
        killer.join(30)
        return super().write(context)


@pytest.mark.django_db(transaction=True)
def test_the_database_dropping_mid_run_fails_the_run_record_and_the_next_run_completes(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    case, previous = summarised_and_stale(openai_server)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    spy = SummarizeSpy(monkeypatch, writer_for=lambda case_id: DroppingWriter(pid))

    run = services.refresh_firm(firm_id=case.firm_id)

    stored = RefreshRun.objects.get(pk=run.pk)  # read on a fresh connection
    assert (stored.status, stored.claimed, stored.rewritten) == ("failed", 1, 0)
    assert stored.finished_at is not None and ("OperationalError" in stored.error or "InterfaceError" in stored.error)
    row = CaseSummary.objects.get(pk=previous.pk)
    for name in ("text", "content", "written_at", "generation"):
        assert getattr(row, name) == getattr(previous, name), name
    assert row.stale and SummaryVersion.objects.filter(case=case).count() == 1

    spy._writer_for = None
    openai_server.add_chat(valid_reply())
    next_night(case)  # the lease of the interrupted claim
    after = services.refresh_firm(firm_id=case.firm_id)
    assert (after.status, after.claimed, after.rewritten) == ("done", 1, 1)
    assert_repaired(case, previous)


# --- One poisoned case never stalls its firm ---------------------------------------------------------

IMPOSSIBLE_USAGE = {
    "negative": {"prompt_tokens": -7, "completion_tokens": 96, "total_tokens": 89},
    "five billion": {"prompt_tokens": 420, "completion_tokens": 5_000_000_000, "total_tokens": 5_000_000_420},
    "not a number": {"prompt_tokens": "many", "completion_tokens": None, "total_tokens": "many"},
}


@pytest.mark.django_db
@pytest.mark.parametrize("usage", list(IMPOSSIBLE_USAGE))
def test_a_model_reporting_impossible_usage_is_logged_as_an_estimate_and_the_firms_run_goes_on(
    usage: str, openai_server: OpenAIServer
) -> None:
    firm = FirmFactory()
    cases = CaseFactory.create_batch(5, firm=firm)
    # The first case claimed (the oldest stale) gets the poisoned answer, as in the audit.
    openai_server.add_chat(valid_reply(usage_block=IMPOSSIBLE_USAGE[usage]), *[valid_reply() for _ in range(4)])

    run = services.refresh_firm(firm_id=firm.pk)

    assert (run.status, run.claimed, run.rewritten, run.failed, run.error) == ("done", 5, 5, 0, "")
    rows = CaseSummary.objects.filter(case__in=cases)
    assert rows.filter(stale=False, attempts=0).exclude(text="").count() == 5
    odd = AICall.objects.get(server_error__startswith="usage out of range")
    assert odd.case_id == cases[0].pk and odd.outcome == AICall.Outcome.OK and odd.tokens_estimated
    assert IMPOSSIBLE_USAGE[usage]["prompt_tokens"] != 420 or odd.tokens_in == 420  # a sound count is kept
    assert 0 < odd.tokens_in < 100_000 and 0 <= odd.tokens_out <= max_output_tokens()
    spent = sum(c.tokens_in + c.tokens_out for c in AICall.objects.filter(firm_id=firm.pk))
    assert run.tokens_used == spent and spent < 100_000


@pytest.mark.django_db
def test_a_case_whose_rows_the_database_refuses_fails_alone_backs_off_and_its_brief_still_answers(
    openai_server: OpenAIServer,
) -> None:
    firm = FirmFactory()
    cases = CaseFactory.create_batch(5, firm=firm)
    services.graph_rebuild_firm(firm_id=firm.pk)
    poisoned = cases[0]  # the oldest stale case: claimed first
    # Whatever the reason (an out-of-range count did this before counts were checked), the database
    # refuses this one case's AI-call rows; a real constraint, rolled back with the test.
    with connection.cursor() as cursor:
        cursor.execute(
            f"ALTER TABLE {AICall._meta.db_table} ADD CONSTRAINT gm_test_poison"
            f" CHECK (case_id IS DISTINCT FROM {int(poisoned.pk)}) NOT VALID"
        )
    openai_server.default_chat = valid_reply()

    run = services.refresh_firm(firm_id=firm.pk)

    assert (run.status, run.claimed, run.rewritten, run.failed, run.error) == ("done", 5, 4, 1, "")
    others = CaseSummary.objects.filter(case__in=cases[1:])
    assert others.filter(stale=False, attempts=0).exclude(text="").count() == 4
    row = CaseSummary.objects.get(case=poisoned)
    assert (row.text, row.stale, row.attempts) == ("", True, 1)
    assert row.last_error.startswith("IntegrityError") and "Failing row" not in row.last_error
    assert row.next_attempt_after > timezone.now() + dt.timedelta(hours=19)  # backing off until the next night
    # Tonight's later runs do not claim it first again (nor at all): it is backing off.
    assert services.refresh_firm(firm_id=firm.pk).claimed == 0

    # Its brief answers: no summary yet, header facts only (the on-demand write fails the same way).
    http = HttpClient(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=poisoned.owner).key}")
    node = Node.objects.get(kind="case", ref_id=poisoned.pk)
    response = http.get(f"/api/memory/nodes/{node.pk}/brief/")
    assert response.status_code == 200
    assert NO_SUMMARY in response.json()["text"] and poisoned.title in response.json()["text"]
    assert CaseSummary.objects.get(case=poisoned).attempts == 2

    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # ALTER TABLE waits for no deferred check
        cursor.execute(f"ALTER TABLE {AICall._meta.db_table} DROP CONSTRAINT gm_test_poison")
    next_night(poisoned)
    healed = services.refresh_firm(firm_id=firm.pk)
    assert (healed.status, healed.claimed, healed.rewritten) == ("done", 1, 1)
    assert CaseSummary.objects.get(case=poisoned).text


# --- Embedder garbage: search answers by keywords --------------------------------------------------


def _embedding_body(vector: Any) -> dict[str, Any]:
    return {"object": "list", "data": [{"object": "embedding", "index": 0, "embedding": vector}], "model": "m",
            "usage": {"prompt_tokens": 2, "total_tokens": 2}}  # fmt: skip


WIDTH = 384  # the vector column's width (EMBEDDING_DIMENSIONS as migrated)
EMBEDDER_GARBAGE = {
    "non-numbers": Reply(body=_embedding_body(["0.1"] * WIDTH)),
    "nulls": Reply(body=_embedding_body([None] * WIDTH)),
    "a null vector": Reply(body=_embedding_body(None)),
    "the wrong dimension": Reply(body=_embedding_body([0.1] * 7)),
    "not JSON": Reply.not_json(),
    "data that is not a list": Reply(body={"object": "list", "data": "vectors", "model": "m"}),
    "an index that is not a number": Reply(
        body={"object": "list", "data": [{"index": "first", "embedding": [0.1] * WIDTH}]}
    ),
    "no data": Reply(body={"object": "list", "model": "m"}),
}


@pytest.mark.django_db
@pytest.mark.parametrize("garbage", list(EMBEDDER_GARBAGE))
def test_an_embedder_answering_garbage_leaves_search_to_keywords(
    garbage: str, openai_server: OpenAIServer, fault_settings: Any
) -> None:
    assert embeddings.vector_dimensions() == WIDTH
    fault_settings.GRAPH_MEMORY = {**fault_settings.GRAPH_MEMORY, "WRITER": "extractive", "EMBEDDER": "openai"}
    case = CaseFactory(title="Harbour lease", description="Lease of the harbour warehouse in Bremen.")
    services.graph_rebuild_firm(firm_id=case.firm_id)
    services.summarize_case(case_id=case.pk)
    openai_server.add_embeddings(EMBEDDER_GARBAGE[garbage])

    http = HttpClient(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=case.owner).key}")
    response = http.get("/api/memory/search/", {"q": "harbour warehouse"})

    assert response.status_code == 200
    body = response.json()
    node = Node.objects.get(kind="case", ref_id=case.pk)
    assert body["mode"] == "keyword" and [hit["case"]["id"] for hit in body["results"]] == [str(node.pk)]
    call = AICall.objects.get(purpose=AICall.Purpose.EMBEDDING)  # the query's call, logged as failed
    assert call.outcome == AICall.Outcome.ERROR and call.error and call.case_id is None
    assert openai_server.calls("/v1/embeddings") == 1


@pytest.mark.django_db
def test_an_embedder_reporting_impossible_usage_still_answers_by_meaning(
    openai_server: OpenAIServer, fault_settings: Any
) -> None:
    fault_settings.GRAPH_MEMORY = {**fault_settings.GRAPH_MEMORY, "WRITER": "extractive", "EMBEDDER": "openai"}
    case = CaseFactory(title="Harbour lease", description="Lease of the harbour warehouse in Bremen.")
    services.graph_rebuild_firm(firm_id=case.firm_id)
    services.summarize_case(case_id=case.pk)
    assert services.backfill_missing_embeddings(firm_id=case.firm_id) == 1
    vector = [1.0 / WIDTH**0.5] * WIDTH
    openai_server.add_embeddings(Reply(body={**_embedding_body(vector), "usage": {"prompt_tokens": -7}}))
    found = services.search_cases(viewer=case.owner, q="harbour warehouse")
    assert found.mode == "hybrid" and [h.case_id for h in found.results] == [case.pk]
    query_call = AICall.objects.filter(purpose=AICall.Purpose.EMBEDDING).order_by("-id").first()
    assert (query_call.outcome, query_call.tokens_in) == (AICall.Outcome.OK, 0)


class HostEmbedder:
    """A host's own embedder (not one of ours) that fails its own way: by raising, or by returning garbage."""

    name = "host"
    model = "host:test"
    logs_calls = True

    def __init__(self, answer: Any) -> None:
        self.answer = answer

    def embed(self, texts: Any) -> Any:
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


@pytest.mark.django_db
@pytest.mark.parametrize(
    "answer",
    [RuntimeError("model crashed"), embeddings.Embedded(vectors=[["x"] * WIDTH]), embeddings.Embedded(vectors=[]),
     embeddings.Embedded(vectors=[[True] * WIDTH]), "not an embedding"],
    ids=["raises", "non-numbers", "no vector", "booleans", "not an Embedded"],
)  # fmt: skip
def test_any_embedder_failure_is_an_embedding_error(answer: Any, fault_settings: Any) -> None:
    fault_settings.GRAPH_MEMORY = {**fault_settings.GRAPH_MEMORY, "WRITER": "extractive"}
    case = CaseFactory(title="Harbour lease", description="Lease of the harbour warehouse in Bremen.")
    services.graph_rebuild_firm(firm_id=case.firm_id)
    services.summarize_case(case_id=case.pk)
    with pytest.raises(embeddings.EmbeddingError):
        embeddings.embed_texts(HostEmbedder(answer), ["harbour"], firm_id=case.firm_id)
    found = services.search_cases(viewer=case.owner, q="harbour warehouse", embedder=HostEmbedder(answer))
    assert found.mode == "keyword" and [h.case_id for h in found.results] == [case.pk]
    assert AICall.objects.filter(purpose=AICall.Purpose.EMBEDDING, outcome=AICall.Outcome.ERROR).count() == 2


@pytest.mark.django_db
def test_a_host_embedder_answering_numpy_numbers_is_no_failure() -> None:
    import numpy as np

    vector = np.linspace(0.1, 1.0, WIDTH, dtype=np.float32)
    # list(array) holds numpy float32 scalars, which are real numbers but not Python floats.
    firm_id = CaseFactory().firm_id
    embedded = embeddings.embed_texts(HostEmbedder(embeddings.Embedded(vectors=[list(vector)])), ["x"], firm_id=firm_id)
    assert embedded.vectors == [[float(v) for v in vector]]
    assert all(type(v) is float for v in embedded.vectors[0])


# --- Runs whose worker died ---------------------------------------------------------------------


@pytest.mark.django_db
def test_the_next_run_marks_the_firms_runs_past_their_lease_abandoned_and_only_those(fault_settings: Any) -> None:
    fault_settings.GRAPH_MEMORY = {**fault_settings.GRAPH_MEMORY, "WRITER": "extractive"}
    case = CaseFactory()
    other = CaseFactory()
    now = timezone.now()
    long_ago = now - dt.timedelta(days=2)
    dead = RefreshRun.objects.create(firm_id=case.firm_id, lease_until=now - dt.timedelta(minutes=1))
    before_leases = RefreshRun.objects.create(firm_id=case.firm_id, lease_until=None)
    RefreshRun.objects.filter(pk=before_leases.pk).update(started_at=long_ago)
    alive = RefreshRun.objects.create(firm_id=case.firm_id, lease_until=now + dt.timedelta(minutes=10))
    finished = RefreshRun.objects.create(firm_id=case.firm_id, status="done", lease_until=long_ago)
    other_firms = RefreshRun.objects.create(firm_id=other.firm_id, lease_until=long_ago)

    run = services.refresh_firm(firm_id=case.firm_id)

    assert run.status == "done" and run.lease_until > now
    status = dict(RefreshRun.objects.values_list("pk", "status"))
    assert status[dead.pk] == status[before_leases.pk] == RefreshRun.Status.ABANDONED
    assert status[alive.pk] == status[other_firms.pk] == RefreshRun.Status.RUNNING
    assert status[finished.pk] == "done"

"""Batches: bounded concurrency, order, progress, errors per job, cancellation that keeps what finished."""

from __future__ import annotations

import asyncio
import io
import threading

from stub_openai import StubOpenAI

from labkit.core.errors import BudgetExhausted, ModelTimeout
from labkit.core.types import Reply
from labkit.models import batch, replay
from labkit.record.budget import Budget, limits
from labkit.record.ledger import Ledger


def _questions(n: int) -> list[list[dict[str, str]]]:
    return [[{"role": "user", "content": f"question {i}"}] for i in range(n)]


def _stub_batch(stub: StubOpenAI, n: int, **kw):
    return batch.run("openai/stub", _questions(n), api_base=stub.url, api_key="none", **kw)


def test_results_in_job_order_with_concurrency_bounded() -> None:
    seen = []
    with StubOpenAI(latency=0.05) as stub:
        result = _stub_batch(stub, 12, concurrency=3, on_progress=seen.append)
    assert result.texts() == [f"question {i}" for i in range(12)]  # the stub echoes
    assert stub.max_in_flight == 3 and stub.requests == 12
    assert [p.done for p in seen] == list(range(1, 13)) and seen[-1].fraction == 1.0
    assert not result.stopped and result.finished == 12 and not result.errors


def test_a_failing_job_does_not_stop_the_others() -> None:
    model = replay.script(["a", ModelTimeout("job 1 was slow"), "c"], name="batch-errors")
    ledger = Ledger()
    result = batch.run(model, _questions(3), concurrency=1, ledger=ledger, run_id="b")
    assert result.texts() == ["a", None, "c"]
    ((index, error),) = result.errors
    assert index == 1 and isinstance(error, ModelTimeout)
    assert [e.kind for e in ledger.events("b")] == ["generate", "error", "generate"]


def test_cancel_keeps_finished_calls_in_the_ledger_and_settles_the_budget() -> None:
    ledger, budget, cancel = Ledger(), Budget(limits(calls=100)), threading.Event()

    def stop_after_four(p: batch.Progress) -> None:
        if p.done >= 4:
            cancel.set()

    with StubOpenAI(latency=0.1) as stub:
        result = _stub_batch(
            stub,
            40,
            concurrency=2,
            on_progress=stop_after_four,
            cancel=cancel,
            ledger=ledger,
            run_id="c",
            budget=budget,
        )
    assert result.stopped == "cancelled"
    finished = [o for o in result.outcomes if isinstance(o, Reply)]
    assert 4 <= len(finished) < 40 and stub.requests < 40
    generated = [e for e in ledger.events("c") if e.kind == "generate"]
    assert len(generated) == len(finished)  # every finished call is recorded, none lost
    assert budget.reserved.calls == 0  # nothing left reserved: in-flight calls were settled
    assert budget.spent.calls == len(ledger.events("c"))  # finished + cancelled-in-flight


def test_budget_exhaustion_stops_the_batch() -> None:
    model = replay.script(lambda messages, params: "ok", name="batch-budget")
    result = batch.run(model, _questions(10), concurrency=1, budget=Budget(limits(calls=3)))
    assert result.stopped == "budget exhausted"
    assert len(result.replies) == 3 and isinstance(result.outcomes[3], BudgetExhausted)
    assert result.outcomes[4:] == (None,) * 6


def test_run_works_inside_a_running_event_loop() -> None:
    model = replay.script(lambda messages, params: messages[-1]["content"][-1], name="batch-loop")

    async def notebook_cell() -> list[str | None]:
        return batch.run(model, _questions(3)).texts()

    assert asyncio.run(notebook_cell()) == ["0", "1", "2"]


def test_terminal_bar_draws_one_line() -> None:
    out = io.StringIO()
    draw = batch.terminal_bar(out, width=10)
    draw(batch.Progress(done=5, total=10, failed=1, cached=2, elapsed=1.0))
    draw(batch.Progress(done=10, total=10, failed=1, cached=2, elapsed=2.0))
    assert out.getvalue() == (
        "\r[#####.....] 5/10  1 failed  2 cached  5.0/s\r[##########] 10/10  1 failed  2 cached  5.0/s\n"
    )


def test_stub_server_in_its_own_process_serves_a_batch_and_reports_what_it_saw() -> None:
    """The benchmarks run the stub in another process (its CPU apart from the client's)."""
    import json
    import subprocess
    import sys
    import urllib.request

    proc = subprocess.Popen(
        [sys.executable, "-m", "labkit.models.stub_server", "--latency", "0.05"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        result = batch.run("openai/stub", _questions(6), concurrency=3, api_base=url, api_key="none")
        assert result.texts() == [f"question {i}" for i in range(6)]
        with urllib.request.urlopen(url.removesuffix("/v1") + "/stats", timeout=10) as r:
            assert json.loads(r.read()) == {"requests": 6, "max_in_flight": 3}
    finally:
        proc.terminate()
        proc.wait(timeout=10)

"""Many model calls at once: bounded concurrency, progress, cancellation that keeps what finished.

`run(model, jobs, concurrency=8)` sends every job through `labkit.models.gateway.acomplete`
(async litellm calls, at most `concurrency` in flight, an asyncio.Semaphore), so each
finished call is in the ledger, paid through the budget and cached exactly as a single
`complete` would be — the moment it finishes, not at the end of the batch. Outcomes come
back in job order: a Reply, the labkit error that job raised, or None if it never ran.

Progress: `on_progress(Progress)` is called after every finished job; pass
`terminal_bar()` on a terminal, or a function that moves a notebook's progress bar
(labkit itself imports no UI). Cancellation: set the `cancel` event (from the callback,
a button, another thread); no new job starts, calls in flight are cancelled (recorded
as errors, their reservations charged whole), and everything finished stays recorded.
A BudgetExhausted stops the batch the same way.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import IO, TYPE_CHECKING, Any

from labkit.core.errors import BudgetExhausted, LabkitError
from labkit.core.types import Reply
from labkit.models import gateway as models

if TYPE_CHECKING:
    from labkit.models.cache import ResponseCache
    from labkit.record.budget import Budget
    from labkit.record.ledger import Ledger

_NO_PARAMS: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True)
class Job:
    """One request of a batch: its messages, and options for this job only (seed=, replay_key=, ...)."""

    messages: Sequence[Mapping[str, str]]
    params: Mapping[str, Any] = field(default_factory=lambda: _NO_PARAMS)
    round: int = 0


@dataclass(frozen=True)
class Progress:
    done: int  # finished jobs, failed ones included
    total: int
    failed: int
    cached: int
    elapsed: float

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 1.0


Outcome = Reply | LabkitError | None


@dataclass(frozen=True)
class BatchResult:
    outcomes: tuple[Outcome, ...]  # per job, in job order; None = never ran
    elapsed: float
    stopped: str = ""  # "" when every job ran; else "cancelled" or "budget exhausted"

    @property
    def replies(self) -> list[Reply]:
        return [o for o in self.outcomes if isinstance(o, Reply)]

    @property
    def errors(self) -> list[tuple[int, LabkitError]]:
        return [(i, o) for i, o in enumerate(self.outcomes) if isinstance(o, LabkitError)]

    @property
    def finished(self) -> int:
        return sum(o is not None for o in self.outcomes)

    def texts(self) -> list[str | None]:
        """Reply text per job (None where the job failed or never ran)."""
        return [o.text if isinstance(o, Reply) else None for o in self.outcomes]


@dataclass(kw_only=True)
class _State:
    total: int
    t0: float = field(default_factory=time.perf_counter)
    done: int = 0
    failed: int = 0
    cached: int = 0
    stopped: str = ""

    def progress(self) -> Progress:
        return Progress(self.done, self.total, self.failed, self.cached, time.perf_counter() - self.t0)


async def arun(
    model: str,
    jobs: Sequence[Job | Sequence[Mapping[str, str]]],
    *,
    concurrency: int = 8,
    on_progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
    ledger: Ledger | None = None,
    run_id: str = "",
    role: str = "model",
    budget: Budget | None = None,
    cache: ResponseCache | None = None,
    **options: Any,
) -> BatchResult:
    """Run `jobs` against `model` with at most `concurrency` calls in flight (see module doc)."""
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    todo = [j if isinstance(j, Job) else Job(j) for j in jobs]
    cancel = cancel or threading.Event()
    outcomes: list[Outcome] = [None] * len(todo)
    state = _State(total=len(todo))
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int, job: Job) -> None:
        async with gate:
            if cancel.is_set() or state.stopped:
                return
            try:
                outcomes[i] = await models.acomplete(
                    model,
                    [dict(m) for m in job.messages],
                    ledger=ledger,
                    run_id=run_id,
                    round=job.round,
                    role=role,
                    budget=budget,
                    cache=cache,
                    **{**options, **job.params},
                )
            except BudgetExhausted as e:
                outcomes[i] = e
                state.stopped = "budget exhausted"
            except LabkitError as e:
                outcomes[i] = e
        state.done += 1
        state.failed += not isinstance(outcomes[i], Reply)
        state.cached += isinstance(outcomes[i], Reply) and outcomes[i].cached  # type: ignore[union-attr]
        if on_progress is not None:
            on_progress(state.progress())

    pending = {asyncio.ensure_future(one(i, j)) for i, j in enumerate(todo)}
    try:
        while pending:
            _, pending = await asyncio.wait(pending, timeout=0.05)
            if cancel.is_set() or state.stopped:
                state.stopped = state.stopped or "cancelled"
                break
    finally:
        for task in pending:  # in flight or waiting at the gate: cancel, and wait for their records
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
    return BatchResult(tuple(outcomes), time.perf_counter() - state.t0, state.stopped)


def run(model: str, jobs: Sequence[Job | Sequence[Mapping[str, str]]], **kwargs: Any) -> BatchResult:
    """`arun` from ordinary (non-async) code; also works where an event loop is already running."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(arun(model, jobs, **kwargs))
    # Inside a running loop (Jupyter): run the batch on its own loop in a worker thread.
    box: list[BatchResult | BaseException] = []

    def work() -> None:
        try:
            box.append(asyncio.run(arun(model, jobs, **kwargs)))
        except BaseException as e:
            box.append(e)

    worker = threading.Thread(target=work, name="labkit-batch")
    worker.start()
    worker.join()
    if isinstance(box[0], BaseException):
        raise box[0]
    return box[0]


def terminal_bar(stream: IO[str] | None = None, width: int = 30) -> Callable[[Progress], None]:
    """A progress callback that draws one updating line on a terminal (stderr by default)."""
    out = stream or sys.stderr

    def draw(p: Progress) -> None:
        filled = int(width * p.fraction)
        rate = p.done / p.elapsed if p.elapsed > 0 else 0.0
        out.write(
            f"\r[{'#' * filled}{'.' * (width - filled)}] {p.done}/{p.total}"
            f"  {p.failed} failed  {p.cached} cached  {rate:.1f}/s"
        )
        if p.done == p.total:
            out.write("\n")
        out.flush()

    return draw

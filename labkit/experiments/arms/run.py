"""A sweep of many arms jobs (labkit.experiments.arms.jobs) on a backend.

Backends: "local" (a process pool; a pool broken by a dead worker is rebuilt and the
unfinished jobs re-run) and "ray" (`ray.remote(max_retries=...)`; joins LABKIT_RAY_ADDRESS
when set, else starts a local cluster on 127.0.0.1). A case's jobs run as one batch on one
worker, so they share its verdict cache (`batches`). `Workers` keeps the worker processes
(and their warm sandbox runners) across sweeps, and warms each once. Results are merged in
job order, so the same plan and seeds give the same ledger content on either backend.

The jobs' names are re-exported here (`from labkit.experiments.arms.run import Plan, run_job`).
"""

from __future__ import annotations

import multiprocessing
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from labkit.core.errors import BackendUnavailable, InvalidSetting
from labkit.experiments.arms.jobs import (
    SUITES,
    Job,
    JobResult,
    Plan,
    jobs_for,
    merge,
    run_batch,
    run_job,
)
from labkit.experiments.arms.jobs import _cases as _cases
from labkit.experiments.arms.jobs import _checker as _checker

# `_cases` and `_checker` are re-exported too: __main__, the sweep benchmark and tests read them here
__all__ = [
    "SUITES", "Backend", "Job", "JobResult", "Plan", "Workers", "batches", "jobs_for", "merge", "run_batch", "run_job",
    "sweep",
]  # fmt: skip

Backend = Literal["local", "ray"]


def batches(jobs: Sequence[Job], workers: int) -> list[list[Job]]:
    """`jobs` grouped by (suite, case), in order: one worker runs all of a case's jobs.

    Each worker has its own verdict cache. A case's jobs share verdicts (its start, candidates
    that recur across arms and seeds); spread over two workers, each validated them again: a
    sweep of 32 jobs ran 75 sandboxed pytest runs on 2 workers against 47 on 1. Batched by case,
    2 workers run what 1 runs. While there are fewer than 2 batches per worker, the largest is
    split in two, so every worker still has work.
    """
    groups: dict[tuple[str, str], list[Job]] = {}
    for j in jobs:
        groups.setdefault((j.suite, j.case), []).append(j)
    out = list(groups.values())
    while len(out) < 2 * workers:
        big = max(range(len(out)), key=lambda i: len(out[i]), default=-1)
        if big < 0 or len(out[big]) < 2:
            break
        b = out[big]
        out[big : big + 1] = [b[: len(b) // 2], b[len(b) // 2 :]]
    return out


def _warm(plan: Plan, job: Job, gate: str, parties: int) -> tuple[int, float]:
    """One worker's warm-up: run `job`, forget its verdicts, wait at the gate for the others."""
    t0 = time.perf_counter()
    run_job(plan, job)  # imports the engine, loads the suite, starts this worker's sandbox runner
    _checker.cache_clear()  # nothing validated here is reused later: timed jobs start cold
    Path(gate, str(os.getpid())).touch()
    deadline = time.monotonic() + 120
    while len(os.listdir(gate)) < parties and time.monotonic() < deadline:
        time.sleep(0.01)  # held here, this worker cannot take another warm-up: one each
    return os.getpid(), time.perf_counter() - t0


class Workers:
    """Worker processes kept across sweeps: a spawned local process pool, or a Ray cluster's.

    A fresh worker pays its start once: interpreter, imports, loading the suite, starting its
    sandbox runner (bubblewrap + a warm pytest), a first validation. `warm(plan, job)` runs
    `job` once on every worker (a gate holds each until all have started, so each gets exactly
    one) and forgets its results and verdicts; sweeps run after it on warm workers. A pool
    broken by a dead worker is replaced (cold). Ray: joins LABKIT_RAY_ADDRESS when set (no
    gate: its workers may be on other hosts), else starts a local cluster of `workers` CPUs on
    127.0.0.1, stopped by `close`. Use as a context manager.
    """

    def __init__(self, backend: Backend = "local", workers: int = 2) -> None:
        if backend not in ("local", "ray"):
            raise InvalidSetting(f"backend must be 'local' or 'ray', got {backend!r}")
        if workers < 1:
            raise InvalidSetting(f"workers must be at least 1, got {workers}")
        self.backend: Backend = backend
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None
        self._ray_started = False

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _local(self) -> ProcessPoolExecutor:
        # spawn, not fork: a fork of a process holding threads (verdict cache, ledger) can deadlock
        if self._pool is None:
            self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"))
        return self._pool

    def _ray(self) -> Any:
        import ray

        if not ray.is_initialized():
            address = os.environ.get("LABKIT_RAY_ADDRESS")
            if address:
                ray.init(address=address, log_to_driver=False)
            else:
                self._start_local_ray(ray)
                self._ray_started = True
        return ray

    def _start_local_ray(self, ray: Any, attempts: int = 2) -> None:
        # On a loaded machine a local node can fail to come up: the raylet gives up waiting for
        # its agents (ray-project/ray#65983) and ray.init raises a bare Exception ("timed out
        # during startup"). Starting again usually works; the second failure is reported.
        # A local node's workers inherit this process's environment (PYTHONPATH included), so
        # they need no runtime_env: one cost every start about 6 s of CPU in Ray's agent.
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        for attempt in range(1, attempts + 1):
            try:
                ray.init(
                    num_cpus=self.workers, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False
                )
                return
            except Exception as e:
                ray.shutdown()
                if attempt == attempts:
                    raise BackendUnavailable(f"a local Ray cluster did not start ({attempts} attempts): {e}") from e

    def warm(self, plan: Plan, job: Job) -> list[tuple[int, float]]:
        """Run `job` once on every worker, results discarded; (pid, seconds) per worker."""
        plan = replace(plan, kill_once="")
        remote = self.backend == "ray" and bool(os.environ.get("LABKIT_RAY_ADDRESS"))
        parties = 1 if remote else self.workers
        with tempfile.TemporaryDirectory(prefix="labkit-gate-") as gate:
            args = (plan, job, gate, parties)
            if self.backend == "local":
                futures = [self._local().submit(_warm, *args) for _ in range(self.workers)]
                return [f.result() for f in futures]
            ray = self._ray()
            warm = ray.remote(max_retries=0)(_warm)
            return list(ray.get([warm.remote(*args) for _ in range(self.workers)]))

    def run(
        self, plan: Plan, jobs: Sequence[Job], *, retries: int = 3, on_done: Callable[[JobResult], None] | None = None
    ) -> list[JobResult]:
        """Run every job once, a case's jobs on one worker; a job whose worker died is re-run."""
        if len({j.run_id for j in jobs}) != len(jobs):
            raise InvalidSetting("jobs must be unique (suite, case, arm, seed)")
        done: dict[str, JobResult] = {}

        def finished(results: list[JobResult]) -> None:
            for r in results:
                done[r.job.run_id] = r
                if on_done:
                    on_done(r)

        if self.backend == "ray":
            ray = self._ray()
            remote = ray.remote(max_retries=retries)(run_batch)
            for results in ray.get([remote.remote(plan, b) for b in batches(jobs, self.workers)]):
                finished(results)
        for _attempt in range(retries + 1 if self.backend == "local" else 0):
            todo = [j for j in jobs if j.run_id not in done]
            if not todo:
                break
            pool = self._local()
            futures = [pool.submit(run_batch, plan, b) for b in batches(todo, self.workers)]
            for fut in futures:
                try:
                    finished(fut.result())
                except BrokenProcessPool:  # a worker died: the rest of this pool is lost, re-run below
                    pool.shutdown(wait=False, cancel_futures=True)
                    self._pool = None
                    break
        missing = [j.run_id for j in jobs if j.run_id not in done]
        if missing:
            raise RuntimeError(f"{len(missing)} job(s) never finished after {retries} retries: {missing[:3]}")
        return [done[j.run_id] for j in jobs]

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        if self._ray_started:
            import ray

            ray.shutdown()
            self._ray_started = False


def sweep(
    plan: Plan,
    jobs: Sequence[Job],
    *,
    backend: Backend = "local",
    workers: int = 2,
    retries: int = 3,
    on_done: Callable[[JobResult], None] | None = None,
    pool: Workers | None = None,
) -> list[JobResult]:
    """Run every job once; a job whose worker died is re-run (up to `retries` times).

    On `pool` (warm `Workers`, kept by the caller) if given; else local with one worker runs
    in this process, and anything else on `Workers(backend, workers)` started and closed here.
    """
    if len({j.run_id for j in jobs}) != len(jobs):
        raise InvalidSetting("jobs must be unique (suite, case, arm, seed)")
    if pool is not None:
        return pool.run(plan, jobs, retries=retries, on_done=on_done)
    if backend == "local" and workers <= 1 and not plan.kill_once:
        results = []
        for j in jobs:
            results.append(run_job(plan, j))
            if on_done:
                on_done(results[-1])
        return results
    with Workers(backend, workers) as w:
        return w.run(plan, jobs, retries=retries, on_done=on_done)

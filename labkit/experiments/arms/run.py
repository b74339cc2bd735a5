"""One (case, arm, seed) through the engine under a matched budget, and a sweep of many.

Every job runs in its own in-memory ledger under run id `arms/<suite>/<case>/<arm>/<seed>`
and a fresh `Budget(plan.limit)` (the same limit for every arm: tokens, calls, wall time,
cost units). An arm that cannot reserve its next step stops with the engine's "budget"
stop — recorded, incomplete, and still in the denominator. The job returns its events
(with the text of inputs and outputs); `merge` appends them to one ledger, skipping any
run id the ledger already holds, so a re-run job is counted once.

Backends: "local" (a process pool; a pool broken by a dead worker is rebuilt and the
unfinished jobs re-run) and "ray" (`ray.remote(max_retries=...)`; joins LABKIT_RAY_ADDRESS
when set, else starts a local cluster on 127.0.0.1). A case's jobs run as one batch on one
worker, so they share its verdict cache (`batches`). `Workers` keeps the worker processes
(and their warm sandbox runners) across sweeps, and warms each once. Results are merged in
job order, so the same plan and seeds give the same ledger content on either backend.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, fields, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from labkit.core.errors import BackendUnavailable, InvalidSetting
from labkit.core.types import Usage
from labkit.experiments.arms.arms import ARMS, make_arm
from labkit.experiments.arms.policy import ModelPolicy, Policy, SimulatedPolicy
from labkit.record.events import Kind, Role
from labkit.record.ledger import Ledger

if TYPE_CHECKING:  # the suites (and the case loader behind them) load when a job needs its cases
    from labkit.experiments.arms.suites import ArmCase

__all__ = ["Job", "JobResult", "Plan", "Workers", "batches", "jobs_for", "merge", "run_batch", "run_job", "sweep"]

Backend = Literal["local", "ray"]
SUITES = ("humaneval", "humaneval-control", "repair")


@dataclass(frozen=True)
class Plan:
    """What every job shares: the budget limit, the policy, the stronger model (or none)."""

    limit: Usage = Usage(tokens=4 * 1024, calls=4, wall_seconds=600.0, cost_units=12.0)
    model: str = ""  # "" = the simulated policy with `sim` parameters
    sim: dict[str, float] = field(default_factory=dict)
    stronger: str = ""  # a second model name ("sim" = a simulated stronger policy); "" = not available
    stronger_sim: dict[str, float] = field(default_factory=lambda: {"p_fix_blind": 0.6})
    n: int = 4  # best-of-n samples
    rounds: int = 4
    kill_once: str = ""  # fault injection: a file path; the first job to find it missing creates it and dies


@dataclass(frozen=True)
class Job:
    suite: str
    case: str
    arm: str
    seed: int

    @property
    def run_id(self) -> str:
        return f"arms/{self.suite}/{self.case}/{self.arm}/{self.seed}"


@dataclass(frozen=True)
class JobResult:
    job: Job
    events: list[dict[str, Any]]
    status: str  # "complete" | "incomplete" | "not available"
    seconds: float
    validation_seconds: float


@cache
def _cases(suite: str) -> dict[str, ArmCase]:
    from labkit.experiments.arms.suites import humaneval_cases, repair_arm_cases

    if suite == "repair":
        return {c.id: c for c in repair_arm_cases()}
    if suite in ("humaneval", "humaneval-control"):
        return {c.id: c for c in humaneval_cases(control=suite == "humaneval-control")}
    raise InvalidSetting(f"unknown suite {suite!r}; suites are {SUITES}")


def jobs_for(suite: str, cases: Sequence[str], arms: Sequence[str], seeds: Sequence[int]) -> list[Job]:
    bad = [a for a in arms if a not in ARMS]
    if bad:
        raise InvalidSetting(f"unknown arm(s) {bad}; arms are {ARMS}")
    known = _cases(suite)
    missing = [c for c in cases if c not in known]
    if missing:
        raise InvalidSetting(f"suite {suite!r} has no case {missing[0]!r}")
    return [Job(suite, c, a, s) for c in cases for a in arms for s in seeds]


def _policy(plan: Plan, job: Job, case: ArmCase) -> Policy | None:
    if job.arm == "stronger":
        if not plan.stronger:
            return None
        if plan.stronger == "sim":
            return SimulatedPolicy(**{**plan.sim, **plan.stronger_sim}, seed=job.seed, name="simulated stronger policy").bind([case])  # type: ignore[arg-type]
        return ModelPolicy(plan.stronger, seed=job.seed, name=plan.stronger)
    if plan.model:
        return ModelPolicy(plan.model, seed=job.seed, name=plan.model)
    return SimulatedPolicy(**plan.sim, seed=job.seed).bind([case])  # type: ignore[arg-type]


@cache
def _checker() -> Any:
    from labkit.grading.validator import Limits, Validator
    from labkit.grading.verdicts import Checker

    return Checker(Validator(Limits(wall_seconds=20.0)))


def run_job(plan: Plan, job: Job) -> JobResult:
    """Run one job in a fresh in-memory ledger; return its events (inputs/outputs as text)."""
    if plan.kill_once and not os.path.exists(plan.kill_once):
        with open(plan.kill_once, "w") as f:
            f.write(job.run_id)
        os._exit(17)  # a worker dying mid-sweep (fault injection)
    from labkit.loop.engine import run
    from labkit.record.budget import Budget

    t0 = time.perf_counter()
    case = _cases(job.suite)[job.case]
    ledger = Ledger()
    policy = _policy(plan, job, case)
    if policy is None:
        ledger.record(job.run_id, 0, Role.EXPERIMENT, Kind.STOP, detail={"case": case.id, "slice": job.suite,
                      "rule": "not available", "reason": "no stronger model named: the arm is not run (never stood in for)"})  # fmt: skip
        return JobResult(job, _export(ledger, job.run_id), "not available", time.perf_counter() - t0, 0.0)
    arm = make_arm(job.arm, policy, n=plan.n, max_rounds=plan.rounds)
    ledger.record(job.run_id, 0, Role.EXPERIMENT, Kind.DEFINE, detail={
        "case": case.id, "slice": job.suite, "arm": job.arm, "policy": policy.name, "simulated": policy.simulated,
        "limit": plan.limit.as_dict(), "upper": arm.upper.as_dict(), "keep": arm.keep, "rounds": arm.rounds})  # fmt: skip
    budget = Budget(plan.limit, ledger=ledger, run_id=job.run_id)
    out = run([case.task], arm, _checker(), rounds=arm.rounds, keep=arm.keep, stop_at_green=arm.stop_at_green,
              ledger=ledger, budget=budget, run_id=job.run_id)  # fmt: skip
    status = "incomplete" if out.stop is not None and out.stop.rule == "budget" else "complete"
    events = _export(ledger, job.run_id)
    validation = sum(e["wall_seconds"] for e in events if e["kind"] in ("verify", "score") and e["role"] != "budget")
    return JobResult(job, events, status, time.perf_counter() - t0, validation)


def _export(ledger: Ledger, run_id: str) -> list[dict[str, Any]]:
    rows = []
    for e in ledger.events(run_id):
        d = {f.name: getattr(e, f.name) for f in fields(e)}
        d["detail"] = json.loads(json.dumps(dict(e.detail)))
        d["inputs"] = ledger.get(e.input_hash) if e.input_hash else None
        d["outputs"] = ledger.get(e.output_hash) if e.output_hash else None
        rows.append(d)
    return rows


def merge(ledger: Ledger, results: Sequence[JobResult]) -> int:
    """Append each result's events to `ledger` in job order; a run id already there is skipped."""
    have = set(ledger.runs())
    added = 0
    for r in sorted(results, key=lambda r: r.job.run_id):
        if r.job.run_id in have:
            continue
        for e in r.events:
            ledger.record(
                e["run_id"], e["round"], e["role"], e["kind"], inputs=e["inputs"], outputs=e["outputs"],
                evidence=json.loads(e["evidence"]) if e["evidence"] else None,
                usage=Usage(e["tokens"], e["calls"], e["wall_seconds"], e["cost_units"]),
                started_at=e["started_at"], ended_at=e["ended_at"], detail=e["detail"],
            )  # fmt: skip
        have.add(r.job.run_id)
        added += 1
    return added


def run_batch(plan: Plan, jobs: Sequence[Job]) -> list[JobResult]:
    """Run `jobs` one after another in this process (a batch: one case's jobs, see `batches`)."""
    return [run_job(plan, j) for j in jobs]


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
        for attempt in range(1, attempts + 1):
            try:
                ray.init(num_cpus=self.workers, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False,
                         runtime_env={"env_vars": {"PYTHONPATH": os.environ.get("PYTHONPATH", ""),
                                                   "LITELLM_LOCAL_MODEL_COST_MAP": "True"}})  # fmt: skip
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

    def run(self, plan: Plan, jobs: Sequence[Job], *, retries: int = 3,
            on_done: Callable[[JobResult], None] | None = None) -> list[JobResult]:  # fmt: skip
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


def sweep(plan: Plan, jobs: Sequence[Job], *, backend: Backend = "local", workers: int = 2, retries: int = 3,
          on_done: Callable[[JobResult], None] | None = None, pool: Workers | None = None) -> list[JobResult]:  # fmt: skip
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

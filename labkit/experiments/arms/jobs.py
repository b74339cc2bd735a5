"""One (case, arm, seed) through the engine under a matched budget: the jobs of a sweep.

Every job runs in its own in-memory ledger under run id `arms/<suite>/<case>/<arm>/<seed>`
and a fresh `Budget(plan.limit)` (the same limit for every arm: tokens, calls, wall time,
cost units). An arm that cannot reserve its next step stops with the engine's "budget"
stop — recorded, incomplete, and still in the denominator. The job returns its events
(with the text of inputs and outputs); `merge` appends them to one ledger, skipping any
run id the ledger already holds, so a re-run job is counted once. `labkit.experiments.arms.run`
runs many jobs on a backend.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from functools import cache
from typing import TYPE_CHECKING, Any

from labkit.core.errors import InvalidSetting
from labkit.core.types import Usage
from labkit.experiments.arms.arms import ARMS, make_arm
from labkit.experiments.arms.policy import ModelPolicy, Policy, SimulatedPolicy
from labkit.record.events import Kind, Role
from labkit.record.ledger import Ledger

if TYPE_CHECKING:  # the suites (and the case loader behind them) load when a job needs its cases
    from labkit.experiments.arms.suites import ArmCase

__all__ = ["SUITES", "Job", "JobResult", "Plan", "jobs_for", "merge", "run_batch", "run_job"]

SUITES = ("humaneval", "humaneval-control", "repair")


@dataclass(frozen=True, kw_only=True)
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
            params: dict[str, Any] = {**plan.sim, **plan.stronger_sim}  # the policy's stated parameters
            return SimulatedPolicy(**params, seed=job.seed, name="simulated stronger policy").bind([case])
        return ModelPolicy(model=plan.stronger, seed=job.seed, name=plan.stronger)
    if plan.model:
        return ModelPolicy(model=plan.model, seed=job.seed, name=plan.model)
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
        ledger.record(
            job.run_id,
            0,
            Role.EXPERIMENT,
            Kind.STOP,
            detail={
                "case": case.id,
                "slice": job.suite,
                "rule": "not available",
                "reason": "no stronger model named: the arm is not run (never stood in for)",
            },
        )
        return JobResult(job, _export(ledger, job.run_id), "not available", time.perf_counter() - t0, 0.0)
    arm = make_arm(job.arm, policy, n=plan.n, max_rounds=plan.rounds)
    ledger.record(
        job.run_id,
        0,
        Role.EXPERIMENT,
        Kind.DEFINE,
        detail={
            "case": case.id,
            "slice": job.suite,
            "arm": job.arm,
            "policy": policy.name,
            "simulated": policy.simulated,
            "limit": plan.limit.as_dict(),
            "upper": arm.upper.as_dict(),
            "keep": arm.keep,
            "rounds": arm.rounds,
        },
    )
    budget = Budget(plan.limit, ledger=ledger, run_id=job.run_id)
    out = run(
        [case.task],
        arm,
        _checker(),
        rounds=arm.rounds,
        keep=arm.keep,
        stop_at_green=arm.stop_at_green,
        case_rules=arm.case_rules,
        ledger=ledger,
        budget=budget,
        run_id=job.run_id,
    )
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
                e["run_id"],
                e["round"],
                e["role"],
                e["kind"],
                inputs=e["inputs"],
                outputs=e["outputs"],
                evidence=json.loads(e["evidence"]) if e["evidence"] else None,
                usage=Usage(e["tokens"], e["calls"], e["wall_seconds"], e["cost_units"]),
                started_at=e["started_at"],
                ended_at=e["ended_at"],
                detail=e["detail"],
            )
        have.add(r.job.run_id)
        added += 1
    return added


def run_batch(plan: Plan, jobs: Sequence[Job]) -> list[JobResult]:
    """Run `jobs` one after another in this process (a batch: one case's jobs, see `batches`)."""
    return [run_job(plan, j) for j in jobs]

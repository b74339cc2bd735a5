"""Batch incidents and conditional subsets (seed 002 §4)."""

from __future__ import annotations

from dataclasses import asdict

import pytest
from recordings import assert_as_recorded

from labkit.core.errors import InvalidSetting
from labkit.core.paths import DATA
from labkit.experiments.arms import incidents as inc
from labkit.experiments.arms.run import Job, JobResult, jobs_for, run_job
from labkit.record.events import Kind
from labkit.record.ledger import Ledger

JOBS = jobs_for("repair", inc.CASES, inc.ARMS, [0])


def _fake(job: Job) -> JobResult:
    """A job that scores its case once and pays 2 units (no validator: this tests the control plane)."""
    rid = job.run_id
    ev = [
        {
            "run_id": rid,
            "round": 1,
            "role": "scorer",
            "kind": str(Kind.SCORE),
            "inputs": None,
            "outputs": None,
            "evidence": "",
            "tokens": 0,
            "calls": 0,
            "wall_seconds": 0.0,
            "cost_units": 0.0,
            "started_at": 0.0,
            "ended_at": 0.0,
            "detail": {"case": job.case, "correct": job.arm == "reflect", "visible": True},
        },
        {
            "run_id": rid,
            "round": 1,
            "role": "budget",
            "kind": str(Kind.VERIFY),
            "inputs": None,
            "outputs": None,
            "evidence": "",
            "tokens": 0,
            "calls": 1,
            "wall_seconds": 0.0,
            "cost_units": 2.0,
            "started_at": 0.0,
            "ended_at": 0.0,
            "detail": {"status": "settled"},
        },
    ]
    return JobResult(job, ev, "complete", 0.0, 0.0)


def test_an_incident_voids_the_whole_batch_and_its_cost_is_still_reported() -> None:
    control = Ledger()
    first, second = inc.run_batches(JOBS, _fake, "env v1", inc.Incident(3, "env v2"), control=control)
    assert (first.status, first.ran, first.planned, first.success) == (
        "voided",
        3,
        8,
        {},
    )  # never concludes
    assert first.cost_units == 6.0 and first.cases_exposed == 2  # reported all the same
    assert (second.status, second.ran, second.environment) == ("complete", 8, "env v2")
    assert second.success == {"direct": 0.0, "reflect": 1.0}
    actions = [e.detail["action"] for e in control.events(inc.CONTROL)]
    assert actions == [
        "register",
        "start",
        "pause",
        "void",
        "start",
        "complete",
    ]  # the rule came first
    with pytest.raises(InvalidSetting, match="registered before the first batch"):
        inc.run_batches(JOBS, _fake, "env v1", None, control=control)
    (only,) = inc.run_batches(JOBS, _fake, "env v1", None)  # no incident: one batch, nothing voided
    assert only.status == "complete" and only.ran == 8


def test_the_activated_subset_is_shown_beside_every_eligible_job_never_alone() -> None:
    with pytest.raises(InvalidSetting, match="every eligible job"):
        inc.MechanismRow(
            arm="reflect", eligible=0, solved=0, activated=4, activated_solved=0, not_activated_solved=0
        )  # a subset without its denominator
    with pytest.raises(InvalidSetting, match="partition"):
        inc.MechanismRow(
            arm="reflect", eligible=32, solved=22, activated=24, activated_solved=14, not_activated_solved=0
        )  # 14 + 0 != 22: the rest was dropped
    sweep = Ledger(DATA / "arms" / "simulated_default.sqlite", read_only=True)
    rows = inc.mechanism_rows(sweep, inc.MECHANISM_ARMS)
    record = inc.recorded()
    assert_as_recorded([asdict(r) for r in rows], record["mechanism"], record, "the mechanism rows")
    reflect = rows[0]
    assert (reflect.eligible, reflect.solved, reflect.activated, reflect.activated_solved) == (
        32,
        22,
        24,
        14,
    )
    assert reflect.solved / reflect.eligible != reflect.activated_solved / reflect.activated


def test_a_recorded_job_of_the_new_batch_re_runs_to_the_same_result() -> None:
    record = inc.recorded()
    run_id, solved, cost = record["batches"][1]["jobs"][0]
    job = next(j for j in JOBS if j.run_id == run_id)
    book = Ledger()
    from labkit.experiments.arms.arm_metrics import runs
    from labkit.experiments.arms.run import merge

    merge(book, [run_job(inc.default_plan(), job)])
    row = runs(book).row(0, named=True)
    assert_as_recorded([row["correct"], row["cost"]], [solved, cost], record, f"job {run_id}")

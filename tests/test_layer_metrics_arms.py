"""Layer metrics read an arms ledger: every job (one engine run) is a unit, in the same vocabulary.

A small sweep with the *simulated* policy (real validator, real tests) is merged into one
ledger; `layer_metrics` over the planned jobs is checked against what the arms' own reader
(`arms.metrics.runs`) and the raw events say, job by job.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

from labkit.core.types import Usage
from labkit.experiments.arms import arm_metrics as metrics
from labkit.experiments.arms.run import Plan, jobs_for, merge, run_job
from labkit.loop.control.layer_metrics import layer_metrics
from labkit.record.events import Kind, Role
from labkit.record.ledger import Ledger

CASES = ["camel_to_snake", "pluralize"]
ARMS = ["direct", "reflect", "best_of_n"]


@pytest.fixture(scope="module")
def swept() -> tuple[Ledger, list[str]]:
    # best-of-4 cannot reserve 4 calls in a 3-call budget: those jobs end incomplete, and stay assigned
    plan = Plan(
        limit=Usage(tokens=3 * 1024, calls=3, wall_seconds=600.0, cost_units=9.0),
        n=4,
        sim={"p_fix_evidence": 0.8, "p_fix_blind": 0.5},
    )
    jobs = jobs_for("repair", CASES, ARMS, [0, 1])
    ledger = Ledger()
    merge(ledger, [run_job(plan, j) for j in jobs])
    return ledger, [j.run_id for j in jobs]


def test_every_arms_job_is_a_returned_unit_with_the_arms_own_outcome(swept: tuple[Ledger, list[str]]) -> None:
    ledger, assigned = swept
    m = layer_metrics(ledger, assigned)
    frame = {r["run"]: r for r in metrics.runs(ledger).iter_rows(named=True)}
    rows = {r.unit: r for r in m.rows}
    assert m.units == len(assigned) == 12 and set(rows) == set(assigned)
    assert all(r.status != "not_returned" for r in m.rows)
    for unit, r in rows.items():
        job = frame[unit]
        assert r.trusted == job["correct"], unit  # success = the hidden tests pass at the end
        assert r.status == (
            "success" if job["correct"] else "incomplete" if job["status"] == "incomplete" else "failed"
        )
        assert r.cost == pytest.approx(job["cost"]), unit  # settled budget events of that job
        built = [
            e
            for e in ledger.events(unit)
            if (e.role, e.kind) == (Role.VALIDATOR, Kind.VERIFY) and e.detail.get("retest")
        ]
        assert r.candidates == len(built), unit  # every child built was re-tested once
    trusted = sum(frame[u]["correct"] for u in assigned)
    assert 0 < m.trusted == trusted < len(assigned)  # some jobs succeed, some do not: the check can tell
    assert m.cost == pytest.approx(sum(frame[u]["cost"] for u in assigned))
    assert m.cost_per_trusted == pytest.approx(m.cost / trusted)
    assert m.candidates_per_task == pytest.approx(sum(r.candidates for r in m.rows) / 12) and m.candidates_per_task > 0
    incomplete = metrics.runs(ledger).filter(pl.col("arm") == "best_of_n")
    assert (incomplete["status"] == "incomplete").all()
    assert all(rows[u].status == "incomplete" and not rows[u].trusted for u in incomplete["run"])


def test_an_engine_runs_stop_speaks_the_layer_vocabulary(swept: tuple[Ledger, list[str]]) -> None:
    ledger, assigned = swept
    for unit in assigned:
        (stop,) = [e for e in ledger.events(unit) if e.kind == Kind.STOP and e.detail.get("run")]
        assert stop.detail["unit"] == unit and stop.detail["status"] in ("success", "incomplete", "failed")
        assert stop.detail["confirmed"] is (stop.detail["status"] == "success")  # scored on the hidden tests


@pytest.mark.parametrize("name", ["smollm2_repair", "smollm2_humaneval"])
def test_the_recorded_smollm2_arms_ledgers_are_read_through_the_same_unit_end(name: str, tmp_path: Path) -> None:
    from labkit.core.paths import DATA

    copy = tmp_path / f"{name}.sqlite"  # opening writes -wal/-shm files beside it: not into data/
    shutil.copy(DATA / "arms" / f"{name}.sqlite", copy)
    ledger = Ledger(copy, read_only=True)
    frame = metrics.runs(ledger).filter(pl.col("status") != "not available")
    assigned = frame["run"].to_list()
    m = layer_metrics(ledger, assigned)
    assert m.units == len(assigned) > 0 and all(r.status != "not_returned" for r in m.rows)
    for r, job in zip(m.rows, frame.iter_rows(named=True), strict=True):
        assert r.unit == job["run"] and r.trusted == job["correct"]
        assert r.cost == pytest.approx(job["cost"]) and job["cost"] > 0
        assert r.status == (
            "success" if job["correct"] else "incomplete" if job["status"] == "incomplete" else "failed"
        )
    assert m.trusted == int(frame["correct"].sum()) and m.cost == pytest.approx(frame["cost"].sum())
    assert m.candidates_per_task > 0


def test_a_ledgers_jobs_are_counted_once_per_length(tmp_path: Path) -> None:
    """`metrics.runs` (and `ledger_table`) keep their result per ledger and length (a page asks many times): the
    same ledger unchanged gives the same frame, a fresh reader counts the same, and an append
    makes it count again."""
    from labkit.core.paths import DATA

    copy = tmp_path / "smollm2_repair.sqlite"
    shutil.copy(DATA / "arms" / "smollm2_repair.sqlite", copy)
    with Ledger(copy) as ledger:
        first = metrics.runs(ledger)
        assert metrics.runs(ledger) is first
        table = metrics.ledger_table(ledger)
        with Ledger(copy, read_only=True) as fresh:
            assert metrics.runs(fresh).equals(first)
            assert table == metrics.ledger_table(ledger) == metrics.table(metrics.runs(fresh))
        ledger.record("not-an-arms-job", 0, "executor", "generate", outputs="x")
        again = metrics.runs(ledger)
        assert again is not first and again.equals(first)

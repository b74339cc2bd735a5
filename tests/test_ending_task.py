"""Ending a task (seed 002 §8): experience candidates, sealed exposure, replaced final test data."""

from __future__ import annotations

import json
from dataclasses import asdict, replace

import pytest
from recordings import assert_as_recorded

from labkit.core.errors import ExposedFinalSet, MemoryRefused
from labkit.core.paths import DATA
from labkit.core.types import Candidate
from labkit.experiments.memory import ending_run as run
from labkit.grading.acceptance import AcceptanceSuite
from labkit.grading.sealed import SealedCheckSet, load_search_case
from labkit.grading.verdicts import Checker
from labkit.loop.engine.steps import Recorder
from labkit.loop.engine.trace import Task
from labkit.loop.search.search_case import search
from labkit.loop.strategies.memory import ending as em
from labkit.record.exposure import EXPOSURES, exposure_of
from labkit.record.ledger import Ledger

FINAL = AcceptanceSuite(
    name="final",
    tests={"final/test_f.py": "def test_f():\n    assert True\n"},
    fail_to_pass=("final/test_f.py::test_f",),
    pass_to_pass=(),
)


def _candidate(label: em.ExposureLabel, strategy: str = "route C") -> em.ExperienceCandidate:
    return em.ExperienceCandidate(
        task="task",
        outcome="success",
        evidence=("event 1",),
        applicability=("when X",),
        counterexamples=("A failed",),
        exposure=label,
        attribution=("n = 1",),
        strategy=strategy,
    )


def test_sealed_diagnostics_never_become_a_skill_or_example_unless_authorised() -> None:
    sealed = _candidate(em.ExposureLabel("sealed", final_set=FINAL.digest))
    for kind in ("skill", "example"):
        with pytest.raises(MemoryRefused, match="sealed-test diagnostics can never become"):
            em.promote(sealed, kind, "x")  # type: ignore[arg-type]
    ledger = Ledger()
    with pytest.raises(MemoryRefused, match="only sealed-exposed"):
        em.authorise(_candidate(em.ExposureLabel("development")), ledger, authorised_by="owner", reason="r")
    allowed = em.authorise(sealed, ledger, authorised_by="owner", reason="teach from it")
    example = em.promote(allowed, "example", "x")
    lesson = em.derive(em.derive(example, "lesson", "y"), "training sample", "z")
    assert example.exposure == lesson.exposure == em.ExposureLabel("sealed", FINAL.digest, "owner")
    assert exposure_of(ledger, FINAL.digest) is not None


def test_an_exposed_final_set_cannot_confirm_until_it_is_replaced() -> None:
    ledger = Ledger()
    rec = Recorder(run_id="r", ledger=ledger, checker=Checker(), budget=None, validation_cost=0.0, simulated=True)
    task = Task(id="t", start=Candidate({"m.py": ""}), suite=FINAL, hidden=FINAL)
    em.authorise(
        _candidate(em.ExposureLabel("sealed", final_set=FINAL.digest)),
        ledger,
        authorised_by="owner",
        reason="r",
    )
    with pytest.raises(ExposedFinalSet, match="replace the final test data"):
        rec.confirm(task, 1, task.start)  # refused before any validator runs
    assert [e.detail["final_set"] for e in ledger.events(EXPOSURES)] == [FINAL.digest]


def test_a_failure_ends_in_findings_not_an_always_do_x_rule() -> None:
    lost = replace(
        _candidate(em.ExposureLabel("development"), strategy=""),
        findings=(em.Finding("budget could not pay route C", ("event 68",), "unreachable within budget"),),
    )
    with pytest.raises(MemoryRefused, match="as findings, not as an 'always do X' skill"):
        em.promote(lost, "skill", "always raise the budget")


def test_a_slice_of_the_recorded_run_re_measures_exactly() -> None:
    """The budget-15 search (the ledger's first run, so its event numbers match) and its
    candidate, and the replacement final set confirming the winner; the full run is
    `python -m labkit.experiments.memory.ending_run`."""
    record = run.recorded()
    case, checker, ledger = load_search_case(DATA / "api_change"), Checker(), Ledger()
    baseline = checker.check(case.case.start, case.suite).verdict
    found = search(case, checker, baseline, total=15, reserve=2, ledger=ledger, run_id="end-15")
    now = json.loads(json.dumps(asdict(run.end_task(ledger, found, case, 15))))
    assert_as_recorded(now, record["success"], record, "the budget-15 task's experience candidate")
    assert found.winner is not None
    fresh = run.replacement_final(case)
    assert fresh.digest == record["replaced"]["final_set"] != record["final_set"]
    assert SealedCheckSet(fresh, checker.validator).confirm(found.winner.candidate) is True
    assert SealedCheckSet(fresh, checker.validator).confirm(case.case.start) is False  # a real check
    assert record["exposed_confirmation"].startswith("refused") and record["incomplete"]["strategy"] == ""

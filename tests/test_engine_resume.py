"""The engine's endings and resumes, on the real cache-isolation case (real pytest runs).

Each bug named in issue 10 is reproduced here first: the stop event's round after a resume,
cost_so_far after a resume, resuming a finished run, and the ways a run used to end with no
stop event (budget on the first validation, a full ledger, a bad patch_cap key).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest

from labkit.core.errors import BudgetExhausted, InvalidSetting, LedgerError, RunInterrupted
from labkit.core.types import Decision, Patch
from labkit.grading.cases import load_case
from labkit.grading.validator import Validator
from labkit.loop.engine import Proposal, Situation, run_loop
from labkit.loop.engine.reflection import check_record
from labkit.loop.strategies.sequence import run_sequence
from labkit.record.ledger import Ledger

CASE = load_case("cache_isolation")
ISO = list(CASE.suite.groups["isolation"])
HITS = list(CASE.suite.groups["same-user hit"])


def _record(cause: str) -> dict:
    return {
        "phenomenon": "B gets A's price",
        "evidence_ref": ISO[0],
        "environment": CASE.environment,
        "hypothesis": {"cause": cause, "refuted_if": "B still gets A's price"},
        "action": cause,
        "expected": {"acceptance": ISO, "protective": HITS},
    }


@dataclass
class Plan:
    """Replies with a fixed patch per round (case patch names), crashing at `crash_at`."""

    steps: list
    crash_at: int = 0
    name: str = "plan"
    simulated: bool = True
    seen: list = field(default_factory=list)

    def propose(self, situation: Situation) -> Proposal:
        if situation.round == self.crash_at:
            raise RuntimeError("reflector process died")
        self.seen.append(situation)
        step = self.steps[min(situation.round, len(self.steps)) - 1]
        if isinstance(step, Proposal):
            return step
        patch = CASE.patch(step)
        return Proposal(record=check_record(_record(patch.description)), patch=patch)


@pytest.fixture(scope="module")
def validator() -> Validator:
    return Validator()


def _run_stops(ledger: Ledger, run_id: str) -> list:
    return [e for e in ledger.events(run_id) if e.kind == "stop" and e.detail.get("run")]


def _crash_then_resume(validator: Validator, path, then: list) -> tuple[Ledger, object]:
    with pytest.raises(RunInterrupted):
        run_loop(
            CASE.start, CASE.suite, validator, Plan(["disable_cache"], crash_at=2), ledger=Ledger(path), run_id="r"
        )
    ledger = Ledger(path)
    trace = run_loop(CASE.start, CASE.suite, validator, Plan(then), ledger=ledger, run_id="r", resume=True)
    return ledger, trace


def test_after_a_resume_the_stop_is_logged_at_the_round_reached(validator, tmp_path) -> None:
    ledger, trace = _crash_then_resume(validator, tmp_path / "l.sqlite", ["composite_key", "composite_key"])
    assert [r.index for r in trace.rounds] == [2] and trace.stop.rule == "resolved"
    final = _run_stops(ledger, "r")[-1]
    assert final.round == 2  # was 1 (len of this process's rounds)
    assert (
        json.loads(ledger.frame("r").filter(ledger.frame("r")["kind"] == "stop")["detail"][0])["rule"] == "interrupted"
    )


def test_cost_so_far_continues_after_a_resume(validator, tmp_path) -> None:
    ledger, _ = _crash_then_resume(validator, tmp_path / "l.sqlite", ["composite_key", "composite_key"])
    costs = [(e.round, e.detail["cost_so_far"]) for e in ledger.events("r") if e.kind == "decide"]
    assert [r for r, _ in costs] == [1, 2]
    assert costs[1][1] > costs[0][1] >= 2.0  # two validations + one reflection before the crash


def test_resuming_a_finished_run_is_a_no_op_returning_what_was_recorded(validator) -> None:
    ledger = Ledger()
    first = run_loop(CASE.start, CASE.suite, validator, Plan(["composite_key"]), ledger=ledger, run_id="done")
    n, runs = len(ledger.events("done")), validator.runs
    again = run_loop(
        CASE.start, CASE.suite, validator, Plan(["disable_cache"]), ledger=ledger, run_id="done", resume=True
    )
    assert len(ledger.events("done")) == n and validator.runs == runs  # nothing validated, paid or appended
    assert len(_run_stops(ledger, "done")) == 1
    assert again.stop == first.stop and again.final.files == first.final.files and again.final_verdict.resolved
    assert again.rounds == ()


def test_budget_exhausted_on_the_first_validation_records_a_stop(validator) -> None:
    from labkit.record.budget import Budget, limits

    ledger = Ledger()
    budget = Budget(limits(cost_units=0.5), ledger=ledger, run_id="b0")
    with pytest.raises(RunInterrupted, match="before its start was validated") as info:
        run_loop(CASE.start, CASE.suite, validator, Plan(["composite_key"]), budget=budget, ledger=ledger, run_id="b0")
    stops = _run_stops(ledger, "b0")
    assert len(stops) == 1 and stops[0].detail["rule"] == "budget" and "cost_units" in stops[0].detail["reason"]
    assert info.value.run.stop.rule == "budget"
    assert not isinstance(info.value, BudgetExhausted)


def test_a_bad_patch_cap_key_records_a_stop_naming_it(validator) -> None:
    ledger = Ledger()
    with pytest.raises(RunInterrupted, match="max_lins") as info:
        run_loop(
            CASE.start,
            CASE.suite,
            validator,
            Plan(["composite_key"]),
            ledger=ledger,
            run_id="cap",
            patch_cap={"max_lins": 3},
        )
    assert isinstance(info.value.__cause__, InvalidSetting)
    stops = _run_stops(ledger, "cap")
    assert len(stops) == 1 and "max_lins" in stops[0].detail["reason"]


def test_a_full_ledger_hands_back_the_run_so_far_with_a_typed_error(validator, tmp_path) -> None:
    path = tmp_path / "small.sqlite"
    ledger = Ledger(path, max_bytes=64 * 1024)
    with pytest.raises(RunInterrupted) as info:
        run_loop(
            CASE.start, CASE.suite, validator, Plan(["disable_cache"] * 40), ledger=ledger, run_id="full", max_rounds=40
        )
    assert isinstance(info.value.__cause__, LedgerError)
    done = info.value.run
    assert done is not None and done.rounds_run >= 1
    # Nothing acknowledged was lost: every round the run reached is readable from the file.
    kinds = [e.kind for e in Ledger(path).events("full")]
    assert kinds.count("decide") >= done.rounds_run - 1 and kinds[0] == "start"


def test_a_sequence_returns_to_the_last_green_checkpoint(validator) -> None:
    from labkit.core import patch as P

    v1 = CASE.start.files["pricing.py"]
    good = P.make({"pricing.py": v1}, {"pricing.py": v1.replace("return product_id", "return (user_id, product_id)")})
    bad = Patch("--- a/pricing.py\n+++ b/pricing.py\n@@ -1,1 +1,1 @@\n-nope\n+nah\n", "does not apply")
    ledger = Ledger()
    seq = run_sequence(CASE.start, [good, bad, good], CASE.suite, validator, ledger=ledger, run_id="seq")
    assert [what.split(":")[0] for _, _, what in seq.steps] == ["kept", "patch does not apply"]
    assert seq.held.files == P.apply(CASE.start, good).files and seq.verdict.resolved and seq.green == 1
    breaking = [CASE.patch("disable_cache"), good]
    seq2 = run_sequence(CASE.start, breaking, CASE.suite, validator, ledger=ledger, run_id="seq2")
    assert [what for _, _, what in seq2.steps] == ["rolled back"] and seq2.held.files == CASE.start.files
    assert seq2.verdict.score("acceptance") == (0, 2)


def test_unusable_decisions_are_recorded_for_every_round(validator) -> None:
    ledger = Ledger()
    trace = run_loop(
        CASE.start, CASE.suite, validator, Plan([Proposal(failure="no idea")]), ledger=ledger, run_id="u", max_rounds=2
    )
    assert trace.stop.rule == "round-cap" and [r.decision.decision for r in trace.rounds] == [Decision.INVESTIGATE] * 2
    assert _run_stops(ledger, "u")[0].round == 2

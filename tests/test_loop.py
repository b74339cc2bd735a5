"""The loop on the real cache-isolation material with a stand-in reflector (no model needed)."""

from dataclasses import dataclass, field

import pytest

from labkit.core import patch as P
from labkit.core.errors import RunInterrupted
from labkit.core.types import Decision, Patch
from labkit.grading.cases import load_case
from labkit.grading.validator import Validator
from labkit.loop.engine import Proposal, Situation, decide, run_loop
from labkit.loop.engine.reflection import check_record
from labkit.loop.strategies.sequence import run_sequence
from labkit.record.ledger import Ledger

CASE = load_case("cache_isolation")
ISO = list(CASE.suite.groups["isolation"])
HITS = list(CASE.suite.groups["same-user hit"])


def record(cause: str) -> dict:
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
    """Replies with a fixed sequence of patches (by case patch name, or a raw Patch, or a failure)."""

    steps: list
    name: str = "plan"
    simulated: bool = True
    seen: list = field(default_factory=list)

    def reflect(self, situation: Situation) -> Proposal:
        self.seen.append(situation)
        step = self.steps[min(situation.round, len(self.steps)) - 1]
        if isinstance(step, Proposal):
            return step
        patch = step if isinstance(step, Patch) else CASE.patch(step)
        return Proposal(record=check_record(record(patch.description)), patch=patch)


@pytest.fixture(scope="module")
def validator():
    return Validator()


def test_composite_key_is_kept_and_ledger_records_every_role(validator):
    ledger = Ledger()
    trace = run_loop(CASE.start, CASE.suite, validator, Plan(["composite_key"]), ledger=ledger, run_id="t1")
    assert [r.decision.decision for r in trace.rounds] == [Decision.KEEP]
    assert trace.stop.rule == "resolved" and trace.final_verdict.resolved
    assert trace.start_verdict.score("acceptance") == (0, 2)
    assert trace.final_verdict.score("acceptance") == (2, 2) and trace.final_verdict.score("protective") == (2, 2)
    frame = ledger.frame("t1")
    assert {"executor", "validator", "reflector", "decision"} <= set(frame["role"].to_list())
    assert {"define", "generate", "verify", "reflect", "decide", "stop"} <= set(frame["kind"].to_list())
    assert frame.filter(frame["kind"] == "verify").height == 2  # v1, then the same validator on v2


def test_disable_cache_rolls_back_then_composite_is_kept(validator):
    plan = Plan(["disable_cache", "composite_key"])
    trace = run_loop(CASE.start, CASE.suite, validator, plan)
    first, second = trace.rounds
    assert first.decision.decision is Decision.ROLL_BACK and "protective" in first.decision.reason
    assert first.retest is not None and first.retest.score("protective") == (0, 2)
    assert first.kept is first.candidate  # rolled back: v1 carried on
    assert second.decision.decision is Decision.KEEP
    assert plan.seen[1].rejected == (CASE.patch("disable_cache").description,)


def test_five_changes_go_green_but_are_rolled_back_by_the_size_rule(validator):
    trace = run_loop(
        CASE.start,
        CASE.suite,
        validator,
        Plan(["five_changes", "composite_key"]),
        patch_cap=dict(CASE.patch_cap),
    )
    first = trace.rounds[0]
    assert first.retest is not None and first.retest.resolved  # it does go green…
    assert first.decision.decision is Decision.ROLL_BACK and first.decision.rule == "patch-size"
    assert trace.rounds[1].decision.decision is Decision.KEEP


def test_unusable_reflections_are_recorded_not_crashes(validator):
    bad_diff = Patch("--- a/pricing.py\n+++ b/pricing.py\n@@ -1,1 +1,1 @@\n-nope\n+nah\n", "bad")
    plan = Plan([Proposal(failure="reply is not JSON"), bad_diff, "composite_key"])
    ledger = Ledger()
    trace = run_loop(CASE.start, CASE.suite, validator, plan, ledger=ledger, run_id="t2")
    d = [r.decision for r in trace.rounds]
    assert d[0].decision is Decision.INVESTIGATE and "not JSON" in d[0].reason
    assert d[1].decision is Decision.INVESTIGATE and "hunk 1" in d[1].reason
    assert d[2].decision is Decision.KEEP
    reasons = ledger.frame("t2").filter(ledger.frame("t2")["kind"] == "decide")["detail"].to_list()
    assert any("not JSON" in r for r in reasons)


def test_patch_touching_a_protected_test_stops_with_an_alarm(validator):
    tamper = P.make(
        {"tests/test_isolation.py": CASE.suite.tests["tests/test_isolation.py"]},
        {"tests/test_isolation.py": "def test_user_b_does_not_get_user_a_price():\n    pass\n"},
        "loosen the test",
    )
    tampered = CASE.start.with_files(
        {**CASE.start.files, "tests/test_isolation.py": CASE.suite.tests["tests/test_isolation.py"]}
    )
    trace = run_loop(tampered, CASE.suite, validator, Plan([tamper]), on_alarm="stop")
    assert trace.stop.decision is Decision.STOP and trace.stop.rule == "integrity"
    assert not trace.final_verdict.resolved
    # by default the alarmed proposal is quarantined and rolled back, and the run goes on
    goes_on = run_loop(tampered, CASE.suite, validator, Plan([tamper]), max_rounds=1)
    first = goes_on.rounds[0].decision
    assert first.decision is Decision.ROLL_BACK and first.rule == "integrity"
    assert "integrity alarm: patch edits protected" in first.reason


def test_round_cap_stops_and_reports(validator):
    trace = run_loop(CASE.start, CASE.suite, validator, Plan([Proposal(failure="no idea")]), max_rounds=2)
    assert len(trace.rounds) == 2 and trace.stop.rule == "round-cap"


def test_stop_rule_fires_and_is_recorded(validator):
    from labkit.loop.engine.stopping import History, Stop, StopRecord

    def after_one(history: History):
        return (
            StopRecord(Decision.STOP, "one round is enough", "custom", Stop.REPORT_UNKNOWNS) if history.rounds else None
        )

    trace = run_loop(CASE.start, CASE.suite, validator, Plan([Proposal(failure="x")]), stop_rules=[after_one])
    assert len(trace.rounds) == 1 and trace.stop.rule == "custom"


def test_decide_refuses_a_different_suite(validator):
    v1 = validator.run(CASE.start, CASE.suite)
    other = Validator(limits=type(validator.limits)(wall_seconds=validator.limits.wall_seconds + 1))
    after = other.run(P.apply(CASE.start, CASE.patch("composite_key")), CASE.suite)
    assert decide(v1, after).decision is Decision.STOP  # a different validator cannot grade the fix


def test_checkpointed_sequence_validates_each_step(validator):
    v1 = CASE.start.files["pricing.py"]
    step1 = P.make(
        {"pricing.py": v1},
        {"pricing.py": v1.replace("return product_id", "return (user_id, product_id)")},
    )
    mid = P.apply(CASE.start, step1).files["pricing.py"]
    step2 = P.make(
        {"pricing.py": mid},
        {"pricing.py": mid.replace("self._cache = {}", "self._cache = {}  # keyed per user")},
    )
    ledger = Ledger()
    steps = run_sequence(CASE.start, [step1, step2], CASE.suite, validator, ledger=ledger, run_id="seq")
    assert [v.resolved for _, v, _ in steps.steps] == [True, True]
    assert steps.held.files == P.apply(P.apply(CASE.start, step1), step2).files
    assert ledger.frame("seq").filter(ledger.frame("seq")["kind"] == "checkpoint").height == 2


class Crashes:
    """Keeps the disable-cache round, then crashes (as a killed process would stop)."""

    name, simulated = "crashes", True

    def reflect(self, situation):
        if situation.round == 2:
            raise RuntimeError("reflector process died")
        return Plan(["disable_cache"]).reflect(situation)


def test_a_run_resumes_from_its_ledger(validator, tmp_path):
    path = tmp_path / "ledger.sqlite"
    with pytest.raises(RunInterrupted, match="died") as died:
        run_loop(CASE.start, CASE.suite, validator, Crashes(), ledger=Ledger(path), run_id="r")
    assert isinstance(died.value.__cause__, RuntimeError)
    # Reopen the file as a new process would; round 1 (disable cache, rolled back) is recorded.
    ledger = Ledger(path)
    trace = run_loop(
        CASE.start,
        CASE.suite,
        validator,
        Plan(["composite_key", "composite_key"]),
        ledger=ledger,
        run_id="r",
        resume=True,
    )
    assert [r.index for r in trace.rounds] == [2]  # continues at round 2, not from scratch
    assert trace.rounds[0].decision.decision is Decision.KEEP
    kinds = ledger.frame("r")["kind"].to_list()
    assert kinds.count("resume") == 1 and kinds.count("reflect") == 2


def test_budget_exhaustion_stops_the_loop_and_nothing_is_overspent(validator):
    from labkit.record.budget import Budget, limits

    ledger = Ledger()
    budget = Budget(limits(cost_units=1.5), ledger=ledger, run_id="b")
    # the start validation (1 unit) fits; reserving a reflection (up to 1 unit) does not.
    trace = run_loop(
        CASE.start,
        CASE.suite,
        validator,
        Plan(["composite_key"]),
        budget=budget,
        ledger=ledger,
        run_id="b",
    )
    assert trace.stop.rule == "budget" and "cost_units" in trace.stop.reason
    assert budget.spent.cost_units + budget.reserved.cost_units <= 1.5
    assert ledger.frame("b").filter(ledger.frame("b")["kind"] == "stop").height == 1

"""Each stop rule fires on its signal and stays quiet without it; the chapter's stop comes before round 3."""

from __future__ import annotations

from pathlib import Path

import pytest

from labkit.core.types import Decision, DecisionRecord, Evidence, TestResult
from labkit.loop.engine import accounting
from labkit.loop.engine.accounting import RoundStats
from labkit.loop.engine.stopping import (
    AnyOf,
    Cap,
    History,
    MarginalNet,
    NoNewEvidence,
    Oscillation,
    Step,
    Stop,
    StopRecord,
    UnstableValidator,
    Verification,
    check,
    check_all,
    failure_keys,
    first_stop,
    new_evidence,
    project,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "diminishing_returns" / "rounds.csv"


def chapter_rounds() -> tuple[RoundStats, ...]:
    return accounting.round_stats(accounting.read_rounds(DATA))


# -- marginal net (the chapter's example) --------------------------------------------------


def test_marginal_net_fires_after_round_two_before_round_three_runs() -> None:
    rounds = chapter_rounds()
    rule = MarginalNet()
    assert rule(History(rounds[:1])) is None  # after round 1 (net 31): continue
    record = rule(History(rounds[:2]))  # after round 2 (net 4): the trend says round 3 loses
    assert isinstance(record, StopRecord) and isinstance(record, DecisionRecord)
    assert record.rule == "marginal_net" and record.outcome is Stop.REPORT_UNKNOWNS
    assert record.decision is Decision.STOP and "projected round 3" in record.reason
    fix, brk = project(rounds[:2])
    assert fix - brk < 0 and rounds[2].net < 0  # the projection agrees in sign with what round 3 did


def test_marginal_net_without_projection_only_sees_round_three_after_the_damage() -> None:
    rounds = chapter_rounds()
    rule = MarginalNet(project=False)
    assert rule(History(rounds[:2])) is None
    record = rule(History(rounds))
    assert record is not None and record.outcome is Stop.ROLL_BACK and record.decision is Decision.ROLL_BACK
    assert "net -4" in record.reason


def test_marginal_net_threshold_is_respected() -> None:
    rounds = chapter_rounds()
    assert MarginalNet(threshold=4, project=False)(History(rounds[:2])) is not None  # 4 <= 4
    assert MarginalNet(threshold=3, project=False)(History(rounds[:2])) is None
    assert MarginalNet(threshold=-5)(History(rounds[:1])) is None


def test_projection_keeps_going_while_rates_hold() -> None:
    steady = (
        RoundStats(round=1, fixed=30, broken=2, wrong_before=100, right_before=100),
        RoundStats(round=2, fixed=21, broken=2, wrong_before=72, right_before=128),
    )  # fix rate ~0.3 both rounds
    assert MarginalNet()(History(steady)) is None


# -- no new evidence -------------------------------------------------------------------------


def _ev(candidate: str, fails: dict[str, str], passes: tuple[str, ...] = ()) -> Evidence:
    results = tuple(TestResult(t, "failed", msg) for t, msg in fails.items())
    results += tuple(TestResult(t, "passed") for t in passes)
    return Evidence(
        candidate=candidate,
        suite="suite1",
        validator="val1",
        results=results,
        exit_code=1 if fails else 0,
        wall_seconds=0.1,
    )


def test_no_new_evidence_fires_after_two_quiet_rounds() -> None:
    steps = (
        Step.of("c", 0, _ev("s0", {"t::a": "assert 1 == 2"})),
        Step.of("c", 1, _ev("s1", {"t::a": "assert 3 == 2"})),  # same test, new message: new evidence
        Step.of("c", 2, _ev("s2", {"t::a": "assert 3 == 2"})),  # new candidate, same failure
        Step.of("c", 3, _ev("s3", {"t::a": "assert 1 == 2"})),  # seen in round 0
    )
    assert new_evidence(steps) == {0: 1, 1: 1, 2: 0, 3: 0}
    rule = NoNewEvidence()
    assert rule(History(steps=steps[:3])) is None  # only one quiet round so far
    record = rule(History(steps=steps))
    assert record is not None and record.rule == "no_new_evidence" and "rounds 2..3" in record.reason


def test_no_new_evidence_stays_quiet_while_failures_keep_changing() -> None:
    steps = tuple(Step.of("c", r, _ev(f"s{r}", {f"t::t{r}": "x"})) for r in range(5))
    assert NoNewEvidence()(History(steps=steps)) is None


def test_failure_keys_ignore_the_candidate_but_not_the_suite() -> None:
    a = _ev("cand-a", {"t::a": "boom"})
    b = _ev("cand-b", {"t::a": "boom"})
    other_suite = Evidence(
        candidate="cand-a", suite="suite2", validator="val1", results=a.results, exit_code=1, wall_seconds=0.1
    )
    assert failure_keys(a) == failure_keys(b) != failure_keys(other_suite)


# -- oscillation ------------------------------------------------------------------------------


def test_oscillation_fires_when_a_test_flips_back_with_the_state() -> None:
    a = _ev("A", {"t::y": "y"}, passes=("t::x",))
    b = _ev("B", {"t::x": "x"}, passes=("t::y",))
    steps = (Step.of("k", 0, b), Step.of("k", 1, a), Step.of("k", 2, b))
    record = Oscillation()(History(steps=steps))
    assert record is not None and record.outcome is Stop.ESCALATE and record.case == "k"
    assert "requirements" in record.reason


def test_oscillation_ignores_a_case_that_moves_on_or_stays_put() -> None:
    a = _ev("A", {"t::y": "y"}, passes=("t::x",))
    b = _ev("B", {"t::x": "x"}, passes=("t::y",))
    c = _ev("C", {}, passes=("t::x", "t::y"))
    moving = (Step.of("k", 0, b), Step.of("k", 1, a), Step.of("k", 2, c))
    staying = (Step.of("k", 0, a), Step.of("k", 1, a), Step.of("k", 2, a))
    assert Oscillation()(History(steps=moving)) is None
    assert Oscillation()(History(steps=staying)) is None


def test_oscillation_needs_an_outcome_flip_not_just_a_revisit() -> None:
    # A -> B -> A where B only renames a variable: every test behaves the same.
    a = _ev("A", {"t::x": "x"}, passes=("t::y",))
    b = _ev("B", {"t::x": "x"}, passes=("t::y",))
    steps = (Step.of("k", 0, a), Step.of("k", 1, b), Step.of("k", 2, a))
    assert Oscillation()(History(steps=steps)) is None


# -- unstable validator ------------------------------------------------------------------------


def test_unstable_validator_fires_when_reruns_disagree() -> None:
    runs = (Verification.of(_ev("A", {}, passes=("t::x",)), "k"), Verification.of(_ev("A", {"t::x": "flaky"}), "k"))
    record = UnstableValidator()(History(verifications=runs))
    assert record is not None and "2 different verdicts" in record.reason and record.case == "k"
    assert "fix acceptance first" in record.reason


def test_two_validators_disagreeing_is_also_instability() -> None:
    good = _ev("A", {}, passes=("t::x",))
    other = Evidence(
        candidate="A",
        suite="suite1",
        validator="val2",
        results=(TestResult("t::x", "failed"),),
        exit_code=1,
        wall_seconds=0.1,
    )
    record = UnstableValidator()(History(verifications=(Verification.of(good), Verification.of(other))))
    assert record is not None and "2 validators disagree" in record.reason


def test_stable_reruns_and_different_candidates_do_not_fire() -> None:
    runs = tuple(Verification.of(_ev("A", {"t::x": "same"})) for _ in range(3))
    runs += (Verification.of(_ev("B", {}, passes=("t::x",))),)  # a different candidate may differ
    assert UnstableValidator()(History(verifications=runs)) is None


# -- caps -------------------------------------------------------------------------------------


ROUNDS = (
    RoundStats(round=1, fixed=5, broken=0, wrong_before=10, right_before=10, cost=3.0, seconds=10.0, risk=1),
    RoundStats(round=2, fixed=2, broken=0, wrong_before=5, right_before=15, cost=3.0, seconds=12.0, risk=2),
)


@pytest.mark.parametrize(("cap", "what"), [(Cap(cost=6), "cost"), (Cap(seconds=20), "seconds"), (Cap(risk=3), "risk")])
def test_caps_fire_when_reached(cap: Cap, what: str) -> None:
    record = cap(History(ROUNDS))
    assert record is not None and record.outcome is Stop.ESCALATE and record.reason.startswith(f"escalate: {what}")


def test_caps_stay_quiet_below_the_limit() -> None:
    assert Cap(cost=6.5, seconds=23, risk=4)(History(ROUNDS)) is None
    assert Cap()(History(ROUNDS)) is None
    assert Cap(cost=0)(History()) is None  # nothing has run yet


# -- composition --------------------------------------------------------------------------------


def test_check_returns_the_first_rule_that_fires_and_check_all_every_one() -> None:
    rounds = chapter_rounds()
    rules = [Cap(cost=1e9), MarginalNet(project=False), Cap(cost=1)]
    history = History(rounds)
    first = check(rules, history)
    assert first is not None and first.rule == "marginal_net"
    assert [r.rule for r in check_all(rules, history)] == ["marginal_net", "cap"]
    assert AnyOf(tuple(rules))(history) == first
    assert check([Cap(cost=1e9)], history) is None


def test_first_stop_replays_finished_rounds() -> None:
    rounds = chapter_rounds()
    after, record = first_stop([MarginalNet()], rounds) or (None, None)
    assert after == 2 and record is not None and "projected round 3" in record.reason
    after, record = first_stop([MarginalNet(project=False)], rounds) or (None, None)
    assert after == 3
    assert first_stop([MarginalNet(threshold=-10)], rounds) is None


def test_oscillation_ignores_rolled_back_proposals() -> None:
    # The loop holds A; B is proposed and rolled back twice: the held state never flips.
    a = _ev("A", {}, passes=("t::x",))
    b = _ev("B", {"t::x": "x"})
    steps = (
        Step.of("k", 0, a),
        Step.of("k", 1, b, kept=False), Step.of("k", 1, a),
        Step.of("k", 2, b, kept=False), Step.of("k", 2, a),
    )  # fmt: skip
    assert Oscillation()(History(steps=steps)) is None
    assert new_evidence(steps) == {0: 0, 1: 1, 2: 0}  # ...though the first rejection was new evidence

"""Frontier search on the api_change case: the SPEC §7 trace from a real run, and the rules.

The search is a configuration of `engine.run` (labkit.loop.search.search_run); what it did is
read back from the engine's events (labkit.loop.search.readback)."""

from __future__ import annotations

import dataclasses

import pytest
from search_runs import A, B, C, Script, search, steps

from labkit.core.types import Candidate, Usage, Verdict
from labkit.grading.acceptance import AcceptanceSuite
from labkit.grading.sealed import SealedCheckSet, SearchCase, load_search_case
from labkit.grading.validator import Validator
from labkit.grading.verdicts import Checker
from labkit.loop.control.units import units_in
from labkit.loop.engine.strategy import Child
from labkit.loop.search.frontier import Sealed, SearchError, SearchLimits, State, WinnerRule
from labkit.loop.search.search_case import (
    RouteStrategy,
    Spend,
    costs_of,
    spend,
    task_of,
)
from labkit.loop.search.search_run import run_search
from labkit.record.budget import Budget, limits
from labkit.record.ledger import Ledger


@pytest.fixture(scope="module")
def case() -> SearchCase:
    return load_search_case("api_change")


@pytest.fixture(scope="module")
def checker() -> Checker:
    return Checker(Validator())


@pytest.fixture(scope="module")
def validator(checker: Checker) -> Validator:
    return checker.validator


@pytest.fixture(scope="module")
def baseline(case: SearchCase, validator: Validator) -> Verdict:
    return validator.run(case.case.start, case.suite)


# -- the case material -----------------------------------------------------------------


def test_the_three_routes_fail_and_pass_as_the_chapter_says(
    case: SearchCase, validator: Validator, baseline: Verdict
) -> None:
    from labkit.core.patch import apply
    from labkit.grading.checkset import compare

    base = case.checks.read(baseline.evidence)
    assert len(base.failures) == 3  # both callers and the compatibility check
    got = {}
    for patch in case.case.patches.values():
        v = validator.run(apply(case.case.start, patch), case.suite)
        r = compare(base, case.checks.read(v.evidence))
        got[patch.description] = (v.resolved, [(e.check.split("::")[1], e.severity) for e in r.new],
                                  [e.check.split("::")[1] for e in r.still_failing])  # fmt: skip
    assert got == {
        A: (False, [], ["test_app_runs_on_released_userlib"]),
        B: (False, [("test_user_records_are_frozen", "high")], ["test_app_runs_on_released_userlib"]),
        C: (True, [], []),
    }


def test_the_sealed_final_set_lets_only_pass_or_fail_out(case: SearchCase, validator: Validator) -> None:
    from labkit.core.patch import apply

    sealed = case.sealed(validator)
    assert isinstance(sealed, SealedCheckSet)
    assert sealed.confirm(case.case.start) is False
    assert sealed.confirm(apply(case.case.start, case.case.patches["fix_callers"])) is True
    assert not any(k for k in vars(sealed) if "evidence" in k or "verdict" in k)
    assert set(case.final.tests) <= {"final/test_final.py", "final/userlib_release.py"}
    assert not set(case.final.tests) & set(case.suite.tests)  # never among the dev checks


# -- SPEC §7's worked trace, from a real run --------------------------------------------


def test_worked_trace_search_12_confirmation_2_total_14_one_left(
    case: SearchCase, validator: Validator, baseline: Verdict
) -> None:
    result, led, budget = search(case, validator, baseline)
    accounts = spend(led, "task-1", limit=15)
    assert (accounts.search, accounts.confirmation, accounts.total, accounts.left) == (12, 2, 14, 1)
    assert accounts.by_kind == {"generate": 3, "execute": 6, "verify": 3, "confirm": 2}
    assert budget.spent.cost_units == accounts.total  # the ledger and the budget agree
    table = [(b.name, b.outcome, b.spent) for b in result.branches]
    assert table == [(A, "frontier", 3), (B, "not expanded", 3), (C, "sealed", 3)]
    assert result.success and result.confirmed and result.winner.route == C
    # B's record names the new high-severity failure; A's the ΔF and what still fails
    b = result.branches[1].progress
    assert b["new"] == [{"check": "tests/test_library.py::test_user_records_are_frozen", "severity": "high"}]
    a = result.branches[0].progress
    assert a["delta_f"] == 2 and [x["severity"] for x in a["still_failing"]] == ["high"]
    # the search stopped because the next expansion (3) did not fit in the 1 left
    assert result.reason == "budget_exhausted"


def test_three_branches_of_one_task_are_one_experimental_unit(
    case: SearchCase, validator: Validator, baseline: Verdict
) -> None:
    result, led, _ = search(case, validator, baseline)
    assert len([s for s in steps(led, case) if s.kind == "branch"]) == 3
    assert units_in(e.detail for e in led.events("task-1")) == {"task-1"}  # every event naming a unit


def test_without_the_reserve_the_task_is_incomplete(case: SearchCase, validator: Validator, baseline: Verdict) -> None:
    result, led, _ = search(case, validator, baseline, reserve=0)
    assert [s.route for s in result.sealed] == [C]  # C was sealed ...
    assert not result.success and result.status == "incomplete"
    assert result.reason == "confirmation_unfunded"  # ... but the search ate the confirmation
    assert spend(led, "task-1", 15).search == 15 and result.confirmed is None


def test_a_failed_confirmation_leaves_the_task_incomplete(
    case: SearchCase, validator: Validator, baseline: Verdict
) -> None:
    strict = AcceptanceSuite(
        name="a stricter final set (sealed)",
        tests={"final/test_strict.py": "def test_strict():\n    assert False\n"},
        fail_to_pass=("final/test_strict.py::test_strict",),
        pass_to_pass=(),
    )
    result, _, _ = search(case, validator, baseline, hidden=strict)
    assert result.winner is not None and result.confirmed is False
    assert (result.status, result.reason) == ("incomplete", "confirmation_failed")


def test_the_total_budget_decides_where_the_task_turns_incomplete(
    case: SearchCase, validator: Validator, baseline: Verdict
) -> None:
    outcome = {t: search(case, validator, baseline, total=t)[0].status for t in (12, 13, 14, 15)}
    # 14 = 12 search + 2 confirmation is the least that completes; at 13 C cannot be verified
    assert outcome == {12: "incomplete", 13: "incomplete", 14: "success", 15: "success"}


# -- the rules ---------------------------------------------------------------------------


def test_the_winner_rule_is_registered_before_any_candidate(
    case: SearchCase, validator: Validator, baseline: Verdict
) -> None:
    rule = WinnerRule("first sealed", lambda s, start: s.order)
    _, led, _ = search(case, validator, baseline, rule=rule)
    kinds = [(s.kind, s.detail.get("rule")) for s in steps(led, case)]
    assert kinds[0] == ("define", "first sealed") and kinds[1][0] == "expand"
    start = next(e for e in led.events("task-1") if e.kind == "start")  # preregistered by the engine
    assert start.detail["winner_rule"] == "first sealed" and start.seq < min(
        e.seq for e in led.events("task-1") if e.kind == "generate" and e.round > 0
    )
    with pytest.raises(SearchError, match="registered up front"):
        search(case, validator, baseline, rule=lambda s: 0)


def test_a_sealed_candidate_is_immutable_and_changes_inherit_nothing(
    case: SearchCase, validator: Validator, baseline: Verdict
) -> None:
    result, led, _ = search(case, validator, baseline)
    seal: Sealed = result.winner
    with pytest.raises(dataclasses.FrozenInstanceError):
        seal.route = "other"  # type: ignore[misc]
    changed = seal.candidate.with_files({**seal.candidate.files, "app/extra.py": "x = 1\n"})
    assert seal.covers(seal.candidate) and not seal.covers(changed)
    recorded = [s.detail for s in steps(led, case) if s.kind == "seal"]
    assert recorded == [dict(recorded[0], seal=seal.digest, candidate=seal.candidate.digest)]


def test_an_empty_generation_still_costs_an_expansion_and_its_spend(
    case: SearchCase, validator: Validator, baseline: Verdict
) -> None:
    result, led, _ = search(case, validator, baseline, strategy=Script(()))
    assert len(result.expansions) == 1 and result.expansions[0].proposed == 0
    assert spend(led, "task-1", 15).by_kind == {"generate": 3}
    assert (result.status, result.reason) == ("incomplete", "frontier_empty")


def test_the_host_truncates_to_max_children(case: SearchCase, validator: Validator, baseline: Verdict) -> None:
    result, led, _ = search(case, validator, baseline, limits=SearchLimits(max_children=2), total=40)
    first = result.expansions[0]
    assert (first.proposed, first.kept) == (3, 2)
    assert [b.name for b in result.branches if b.expansion == 1] == [A, B]
    expand = next(s for s in steps(led, case) if s.kind == "expand")
    assert expand.detail["truncated"] == 1


def test_nothing_is_spent_while_building_a_generation_that_does_not_fit(
    case: SearchCase, validator: Validator, baseline: Verdict
) -> None:
    strategy = Script(())
    result, led, budget = search(case, validator, baseline, strategy=strategy, total=4)
    assert strategy.calls == 0 and budget.spent.cost_units == 0  # 3 does not fit in 4 - 2
    assert (result.status, result.reason) == ("incomplete", "budget_exhausted")


def test_depth_and_stall_limits_stop_with_their_reason(
    case: SearchCase, validator: Validator, baseline: Verdict
) -> None:
    deep, _, _ = search(case, validator, baseline, total=100, limits=SearchLimits(max_depth=1, max_expansions=5))
    assert len(deep.expansions) == 1 and deep.reason == "frontier_empty"
    capped, _, _ = search(case, validator, baseline, total=100, limits=SearchLimits(max_expansions=1))
    assert capped.reason == "max_expansions" and capped.success
    # two hypotheses reach the same files: two states; expanding the first proposes nothing
    restore = case.case.patches["restore_old_api"]
    twins = Script((Child(patch=restore, name=A), Child(patch=restore, name="A again, other hypothesis")))
    stalled, _, _ = search(case, validator, baseline, strategy=twins, total=100, limits=SearchLimits(max_stalled=1))
    assert [b.outcome for b in stalled.branches] == ["frontier", "frontier"]
    assert len(stalled.expansions) == 2 and stalled.reason == "stalled" and not stalled.success


def test_states_are_keyed_on_artifact_environment_and_hypothesis() -> None:
    c = Candidate({"a.py": "x = 1\n"})
    keys = {State(c, "env", "h").key, State(c, "env2", "h").key, State(c, "env", "h2").key,
            State(Candidate({"a.py": "x = 2\n"}), "env", "h").key}  # fmt: skip
    assert len(keys) == 4 and State(c, "env", "h", depth=2).key == State(c, "env", "h").key


def test_spend_arithmetic() -> None:
    s = Spend(12, 2, 15, {})
    assert (s.total, s.left) == (14, 1)


def test_search_drives_the_engines_per_candidate_steps(
    case: SearchCase, validator: Validator, baseline: Verdict
) -> None:
    checker = Checker(validator)
    led = Ledger()
    budget = Budget(limits(cost_units=15), confirmation=Usage(cost_units=2), ledger=led, run_id="task-1")
    run_search(task_of(case), RouteStrategy(case), checker, budget, costs_of(case), ledger=led, run_id="task-1")
    events = led.events("task-1")
    generated = [e.detail["proposal"] for e in events if (e.role, e.kind) == ("executor", "generate") and e.round]
    verified = [e.detail["why"] for e in events if (e.role, e.kind) == ("validator", "verify") and e.detail["retest"]]
    assert generated == [A, B, C]  # the engine's step 4 recorded each child
    assert verified == [f"proposal {n}" for n in (A, B, C)]  # the engine's step 5 validated them
    assert checker.runs == 4  # the start (the task's input, not billed) and the three routes
    # the same candidates again: the engine's verdict cache answers, the declared costs are still paid
    led2 = Ledger()
    budget2 = Budget(limits(cost_units=15), confirmation=Usage(cost_units=2), ledger=led2, run_id="again")
    run_search(task_of(case), RouteStrategy(case), checker, budget2, costs_of(case), ledger=led2, run_id="again")
    assert checker.runs == 4 and spend(led2, "again", 15).search == 12

"""Error classes drive the search (seed 002 §4-§5), on the engine: a patch that does not apply ends
its branch, infrastructure is retried under the one billed rule, a policy refusal stops, an integrity
alarm (at step 4 or at validation) or an unknown effect quarantines the task. Real runs on api_change.
"""

from __future__ import annotations

import pytest
from search_runs import C, Script, search, steps

from labkit.core.error_classes import RetryPolicy, UnknownEffect
from labkit.core.errors import MissingKey, ModelUnavailable
from labkit.core.types import Candidate, Patch, Verdict
from labkit.grading.sealed import SearchCase, load_search_case
from labkit.grading.validator import Validator
from labkit.grading.verdicts import Checker
from labkit.loop.control.units import units_in
from labkit.loop.engine.strategy import Child, Proposal, Situation
from labkit.loop.search.search_case import RouteStrategy, spend


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


def test_an_integrity_alarm_quarantines_and_stops_incomplete(
    case: SearchCase, validator: Validator, baseline: Verdict
) -> None:
    tamper = Candidate({**case.case.start.files, "tests/test_callers.py": "def test_x(): pass\n"})
    fix = case.case.patches["fix_callers"]
    strategy = Script((Child(patch=fix, name=C), Child(target=tamper, name="tamper")))
    result, led, _ = search(case, validator, baseline, strategy=strategy, total=30)
    assert [s.route for s in result.sealed] == [C]  # a sealed candidate does not save the task
    assert (result.status, result.reason, result.winner) == ("incomplete", "integrity_or_effect_unresolved", None)
    assert result.branches[-1].outcome == "quarantined"
    assert any(s.kind == "quarantine" for s in steps(led, case))


def test_an_unknown_effect_quarantines(case: SearchCase, validator: Validator, baseline: Verdict) -> None:
    def deploy(candidate: Candidate) -> None:  # run inside the engine's step 4 on each executed route
        raise UnknownEffect("the deploy step timed out after sending", action="deploy")

    result, led, _ = search(case, validator, baseline, build=deploy)
    assert (result.status, result.reason) == ("incomplete", "integrity_or_effect_unresolved")
    decisions = [e.detail for e in led.events("task-1") if e.kind == "decision"]
    assert decisions[0]["error_class"] == "UNKNOWN_EFFECT" and decisions[0]["action"] == "quarantine"


# -- error classes drive the search ------------------------------------------------------


def test_a_patch_that_does_not_apply_ends_that_branch_only(
    case: SearchCase, validator: Validator, baseline: Verdict
) -> None:
    broken = Patch("--- a/app/nope.py\n+++ b/app/nope.py\n@@ -1 +1 @@\n-a\n+b\n", "broken")
    fix = case.case.patches["fix_callers"]
    strategy = Script((Child(patch=broken, name="broken"), Child(patch=fix, name=C)))
    result, led, _ = search(case, validator, baseline, strategy=strategy)
    assert [(b.name, b.outcome, b.error_class) for b in result.branches] == [
        ("broken", "execute failed", "INVALID_ARGUMENT"),
        (C, "sealed", ""),
    ]
    assert result.success


class Flaky:
    """A generator whose model is down `failures` times, then proposes the case routes."""

    name = "flaky model (simulated)"
    simulated = True

    def __init__(self, case: SearchCase, errors: list[Exception]) -> None:
        self.inner, self.errors = RouteStrategy(case), errors

    def propose(self, situation: Situation) -> Proposal:
        if self.errors:
            raise self.errors.pop(0)
        return self.inner.propose(situation)


def test_infrastructure_is_retried_uniformly_and_billed(
    case: SearchCase, validator: Validator, baseline: Verdict
) -> None:
    strategy = Flaky(case, [ModelUnavailable("503")])
    result, led, _ = search(
        case, validator, baseline, strategy=strategy, total=30, retry=RetryPolicy(infrastructure_retries=1)
    )
    assert result.success
    retries = [e.detail for e in led.events("task-1") if e.kind == "retry"]
    assert len(retries) == 1 and retries[0]["original_failure"].startswith("ModelUnavailable")
    assert spend(led, "task-1", 30).by_kind["generate"] >= 6  # the failed attempt was paid
    assert units_in(e.detail for e in led.events("task-1")) == {"task-1"}


def test_policy_denied_stops_the_search(case: SearchCase, validator: Validator, baseline: Verdict) -> None:
    strategy = Flaky(case, [MissingKey("OPENAI_API_KEY is not set")])
    result, led, _ = search(case, validator, baseline, strategy=strategy)
    assert (result.status, result.reason) == ("incomplete", "policy_denied")
    decision = next(e.detail for e in led.events("task-1") if e.kind == "decision")
    assert decision["error_class"] == "POLICY_DENIED" and decision["action"] == "stop"


def test_infrastructure_whose_retries_run_out_stops_the_search(
    case: SearchCase, validator: Validator, baseline: Verdict
) -> None:
    strategy = Flaky(case, [ModelUnavailable("503"), ModelUnavailable("503 again")])
    result, led, _ = search(case, validator, baseline, strategy=strategy, retry=RetryPolicy(infrastructure_retries=1))
    assert (result.status, result.reason) == ("incomplete", "stopped: INFRASTRUCTURE")
    tries = [e.kind for e in led.events("task-1") if e.role == "control"]
    assert tries == ["attempt", "retry"]  # the original try and its one retry, both paid
    assert spend(led, "task-1", 15).by_kind == {"generate": 6}


def test_an_alarm_at_verification_quarantines_too(case: SearchCase, validator: Validator, baseline: Verdict) -> None:
    plugin = Candidate(
        {**case.case.start.files, "conftest.py": "def pytest_collection_modifyitems(items):\n    pass\n"}
    )
    result, led, _ = search(case, validator, baseline, strategy=Script((Child(target=plugin, name="plugin"),)))
    assert (result.status, result.reason) == ("incomplete", "integrity_or_effect_unresolved")
    assert result.branches[-1].outcome == "quarantined" and result.branches[-1].spent == 3  # executed, verified
    decision = next(e.detail for e in led.events("task-1") if e.kind == "decision")
    assert (decision["where"], decision["action"]) == ("verify", "quarantine")
    assert any((e.role, e.kind) == ("validator", "alarm") for e in led.events("task-1"))

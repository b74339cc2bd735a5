"""Error classes decide permissions: each class grants some actions and refuses the rest."""

from __future__ import annotations

import pytest

from labkit.core.error_classes import (
    PERMISSIONS,
    Action,
    Classified,
    ErrorClass,
    PermissionRefused,
    RetryPolicy,
    UnknownEffect,
    permits,
)
from labkit.core.errors import (
    BudgetExhausted,
    IntegrityAlarm,
    LedgerError,
    MissingKey,
    ModelTimeout,
    ModelUnavailable,
    PatchError,
    ReplyFormatError,
)
from labkit.core.types import Evidence, TestResult, Usage, Verdict
from labkit.grading.sandbox import SandboxError, SandboxRun
from labkit.loop.control.classify import classify, retry_infrastructure
from labkit.loop.control.units import UnitError, UnitOutcome, completion_rate, units_in
from labkit.record.budget import Budget, Operation, limits
from labkit.record.ledger import Ledger

E, A = ErrorClass, Action


# -- the permission table: one test per class, what it grants and what it refuses -------


def test_invalid_argument_grants_fixing_arguments_only() -> None:
    assert permits(E.INVALID_ARGUMENT, A.FIX_ARGUMENTS)
    for refused in (A.RETRY_UNCHANGED, A.NEW_HYPOTHESIS, A.REPEAT_ACTION, A.CHANGE_AUTHORISATION):
        assert not permits(E.INVALID_ARGUMENT, refused)


def test_test_failure_needs_new_evidence_or_hypothesis() -> None:
    assert permits(E.TEST_FAILURE, A.NEW_HYPOTHESIS)
    for refused in (A.RETRY_UNCHANGED, A.FIX_ARGUMENTS, A.RELABEL_INFRASTRUCTURE, A.NEW_UNIT):
        assert not permits(E.TEST_FAILURE, refused)


def test_policy_denied_grants_only_an_authorisation_change_or_stop() -> None:
    assert PERMISSIONS[E.POLICY_DENIED].grants == {A.CHANGE_AUTHORISATION, A.STOP}
    assert A.RETRY_UNCHANGED in PERMISSIONS[E.POLICY_DENIED].refuses
    assert A.NEW_HYPOTHESIS in PERMISSIONS[E.POLICY_DENIED].refuses


def test_infrastructure_grants_a_control_plane_retry_but_never_a_new_unit() -> None:
    assert permits(E.INFRASTRUCTURE, A.RETRY_UNCHANGED)
    assert not permits(E.INFRASTRUCTURE, A.NEW_UNIT)
    assert not permits(E.INFRASTRUCTURE, A.NEW_HYPOTHESIS)


def test_unknown_effect_pauses_repeats_until_reconciled() -> None:
    assert permits(E.UNKNOWN_EFFECT, A.RECONCILE)
    assert not permits(E.UNKNOWN_EFFECT, A.REPEAT_ACTION)
    assert not permits(E.UNKNOWN_EFFECT, A.RETRY_UNCHANGED)


def test_every_class_may_stop_and_grants_and_refusals_partition_the_actions() -> None:
    for p in PERMISSIONS.values():
        assert A.STOP in p.grants
        assert p.grants | p.refuses == set(Action) and not p.grants & p.refuses


def test_require_names_the_class_and_what_it_grants() -> None:
    c = Classified(E.POLICY_DENIED, "tool", "write to /etc refused")
    c.require(A.CHANGE_AUTHORISATION)
    with pytest.raises(PermissionRefused, match="POLICY_DENIED .*does not permit 'retry unchanged'"):
        c.require(A.RETRY_UNCHANGED)


# -- classification of concrete errors ------------------------------------------------


@pytest.mark.parametrize(
    ("exc", "source", "cls"),
    [
        (ValueError("bad k"), "tool", E.INVALID_ARGUMENT),
        (PatchError("hunk 2 does not apply"), "tool", E.INVALID_ARGUMENT),
        (ReplyFormatError("not JSON"), "model", E.INVALID_ARGUMENT),
        (AssertionError("expected 3"), "candidate", E.TEST_FAILURE),
        (IntegrityAlarm(["edits protected test"]), "validator", E.POLICY_DENIED),
        (SandboxError("path '..' outside workspace"), "sandbox", E.POLICY_DENIED),
        (MissingKey("OPENAI_API_KEY not set"), "model", E.POLICY_DENIED),
        (BudgetExhausted("cost_units needs 2 but 1 is left"), "budget", E.POLICY_DENIED),
        (ModelTimeout("no answer in 60s"), "model", E.INFRASTRUCTURE),
        (ModelUnavailable("connection refused"), "model", E.INFRASTRUCTURE),
        (LedgerError("disk full"), "host", E.INFRASTRUCTURE),
        (UnknownEffect("deploy timed out after sending"), "tool", E.UNKNOWN_EFFECT),
        (RuntimeError("tool crashed mid-write"), "tool", E.UNKNOWN_EFFECT),
    ],
)
def test_classify_exceptions(exc: BaseException, source: str, cls: ErrorClass) -> None:
    got = classify(exc, source)  # type: ignore[arg-type]
    assert got is not None and got.error_class is cls


@pytest.mark.parametrize("exc", [MemoryError(), TimeoutError("took 61s"), RecursionError()])
def test_a_candidates_own_resource_failure_is_a_test_failure_never_infrastructure(
    exc: BaseException,
) -> None:
    got = classify(exc, "candidate")
    assert got is not None and got.error_class is E.TEST_FAILURE and got.candidate_caused
    with pytest.raises(PermissionRefused, match="candidate-caused failure as infrastructure"):
        got.relabel(E.INFRASTRUCTURE, by="control-plane")


def test_a_candidate_claiming_infrastructure_is_not_believed() -> None:
    class Excuse(Exception):
        error_class = E.INFRASTRUCTURE

    got = classify(Excuse("INFRASTRUCTURE: the grader's disk is full"), "candidate")
    assert got is not None and got.error_class is E.TEST_FAILURE


def test_only_the_control_plane_relabels() -> None:
    c = Classified(E.UNKNOWN_EFFECT, "tool", "timeout after send")
    with pytest.raises(PermissionRefused, match="not 'candidate'"):
        c.relabel(E.INFRASTRUCTURE, by="candidate")
    assert c.relabel(E.INFRASTRUCTURE, by="reconciler").error_class is E.INFRASTRUCTURE


def _verdict(
    *,
    timed_out: bool = False,
    exit_code: int | None = 1,
    alarms: tuple[str, ...] = (),
    f2f: tuple[str, ...] = ("t::a",),
) -> Verdict:
    ev = Evidence(
        candidate="c",
        suite="s",
        validator="v",
        results=(TestResult("t::a", "failed"),) if f2f else (),
        exit_code=exit_code,
        wall_seconds=1.0,
        alarms=alarms,
        timed_out=timed_out,
    )
    return Verdict(ev, () if f2f else ("t::a",), f2f, (), ())


def test_classify_verdicts_and_sandbox_runs() -> None:
    assert classify(_verdict(f2f=())) is None
    failing = classify(_verdict())
    assert failing is not None and failing.error_class is E.TEST_FAILURE
    timeout = classify(_verdict(timed_out=True, exit_code=None))
    assert timeout is not None and timeout.error_class is E.TEST_FAILURE and timeout.candidate_caused
    alarm = classify(_verdict(alarms=("protected test modified",)))
    assert alarm is not None and alarm.error_class is E.POLICY_DENIED
    killed = SandboxRun(
        results=(), exit_code=None, wall_seconds=2.0, timed_out=False, report_found=False, stderr_tail="Killed"
    )
    k = classify(killed)
    assert k is not None and k.error_class is E.TEST_FAILURE and k.candidate_caused
    assert (
        classify(
            SandboxRun(
                results=(TestResult("t::a", "passed"),),
                exit_code=0,
                wall_seconds=1.0,
                timed_out=False,
                report_found=True,
                stderr_tail="",
            )
        )
        is None
    )
    with pytest.raises(TypeError, match="classify takes"):
        classify("boom")  # type: ignore[arg-type]


# -- the uniform, billed infrastructure retry ------------------------------------------


class Flaky:
    def __init__(self, failures: list[BaseException]) -> None:
        self.failures = failures
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return "ok"


def _op(fn: Flaky) -> Operation[str]:
    return Operation(fn, upper=Usage(cost_units=1), measure=lambda _: Usage(cost_units=1))


def test_infrastructure_retries_are_billed_recorded_and_stay_one_unit() -> None:
    with Ledger() as led:
        budget = Budget(limits(cost_units=10))
        fn = Flaky([ModelUnavailable("503"), ModelTimeout("60s")])
        out, attempts = retry_infrastructure(
            budget,
            "generate",
            _op(fn),
            policy=RetryPolicy(infrastructure_retries=2),
            unit="task-1",
            source="model",
            ledger=led,
            run_id="r",
        )
        assert out == "ok" and fn.calls == 3
        assert [a.attempt for a in attempts] == [0, 1, 2]
        # billed: the two failed attempts are charged their whole reservation (usage unknown)
        assert budget.spent.cost_units == 3
        events = [e for e in led.events("r") if e.role == "control"]
        assert units_in(e.detail for e in events) == {"task-1"}  # one unit, three attempts
        assert all(e.detail["original_failure"].startswith("ModelUnavailable") for e in events)


def test_retry_count_is_configuration_and_runs_out() -> None:
    budget = Budget(limits(cost_units=10))
    fn = Flaky([ModelUnavailable("503")] * 5)
    with pytest.raises(ModelUnavailable):
        retry_infrastructure(
            budget,
            "generate",
            _op(fn),
            policy=RetryPolicy(infrastructure_retries=1),
            unit="u",
            source="model",
        )
    assert fn.calls == 2 and budget.spent.cost_units == 2
    with pytest.raises(ValueError, match="infrastructure_retries must be an int >= 0"):
        RetryPolicy(infrastructure_retries=-1)


@pytest.mark.parametrize(
    ("exc", "source"),
    [(MemoryError(), "candidate"), (ValueError("bad"), "tool"), (UnknownEffect("sent?"), "tool")],
)
def test_nothing_but_infrastructure_is_retried(exc: BaseException, source: str) -> None:
    budget = Budget(limits(cost_units=10))
    fn = Flaky([exc])
    with pytest.raises(type(exc)):
        retry_infrastructure(
            budget,
            "execute",
            _op(fn),
            policy=RetryPolicy(infrastructure_retries=3),
            unit="u",
            source=source,  # type: ignore[arg-type]
        )
    assert fn.calls == 1


# -- the denominator -------------------------------------------------------------------


def test_invalid_environment_runs_stay_in_the_denominator() -> None:
    assigned = ["t1", "t2", "t3", "t4"]
    outcomes = [
        UnitOutcome("t1", "success"),
        UnitOutcome("t2", "invalid_environment"),
        UnitOutcome("t3", "incomplete"),
    ]  # t4 never returned
    assert completion_rate(assigned, outcomes) == (1, 4)
    with pytest.raises(UnitError, match="retry or branch is not a new unit"):
        completion_rate(assigned, [*outcomes, UnitOutcome("t1", "success")])
    with pytest.raises(UnitError, match="not assigned"):
        completion_rate(assigned, [UnitOutcome("t9", "success")])

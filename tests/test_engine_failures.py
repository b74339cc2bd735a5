"""The engine classifies a failed step and obeys its class (labkit.loop.engine.failure_policy):
INFRASTRUCTURE is retried under the one billed rule, a class that grants a new hypothesis ends
that child, POLICY_DENIED stops the case, UNKNOWN_EFFECT quarantines it — in a hold-one run as in
a search. Without `failures`, a model error is the round's proposal failure, as before. The
validator here is simulated (a scripted table of verdicts); the control flow is the engine's."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from types import SimpleNamespace

from labkit.core.error_classes import RetryPolicy, UnknownEffect
from labkit.core.errors import MissingKey, ModelUnavailable
from labkit.core.types import Candidate, Evidence, TestResult, Verdict
from labkit.grading.acceptance import AcceptanceSuite
from labkit.grading.verdicts import Checker
from labkit.loop.control.classify import classify_exception
from labkit.loop.engine import engine
from labkit.loop.engine.failure_policy import Failures
from labkit.loop.engine.strategy import Child, Proposal, Situation
from labkit.loop.engine.trace import Task
from labkit.record.events import Kind, Role
from labkit.record.vocabulary import undeclared

SUITE = AcceptanceSuite(name="sim", tests={"t.py": "a = 0\n"}, fail_to_pass=("t.py::a",), pass_to_pass=())


@dataclass
class Table:
    """A scripted validator: the candidate whose file says "fixed" passes (simulated)."""

    id: str = "table"
    python: str = sys.executable
    limits: SimpleNamespace = field(default_factory=lambda: SimpleNamespace(wall_seconds=1.0))

    def run(self, c: Candidate, suite: AcceptanceSuite) -> Verdict:
        ok = c.files["m.py"] == "fixed"
        ev = Evidence(
            candidate=c.digest,
            suite=suite.digest,
            validator=self.id,
            results=(TestResult("t.py::a", "passed" if ok else "failed"),),
            exit_code=0,
            wall_seconds=0.0,
        )
        return Verdict(ev, ("t.py::a",) if ok else (), () if ok else ("t.py::a",), (), ())


@dataclass
class Model:
    """Raises `errors` in turn, then proposes the fix (simulated)."""

    errors: list[Exception]
    name: str = "scripted model"
    simulated: bool = True

    def propose(self, situation: Situation) -> Proposal:
        if self.errors:
            raise self.errors.pop(0)
        return Proposal(children=(Child(target=Candidate({"m.py": "fixed"}), name="fix"),))


def go(model: Model, **kw: object) -> engine.EngineRun:
    task = Task(id="t", start=Candidate({"m.py": "broken"}), suite=SUITE)
    return engine.run([task], model, Checker(Table()), rounds=2, run_id="r", **kw)  # type: ignore[arg-type]


FAILURES = Failures(classify_exception, RetryPolicy(infrastructure_retries=1))


def test_infrastructure_is_retried_and_each_attempt_recorded() -> None:
    out = go(Model([ModelUnavailable("503")]), failures=FAILURES)
    assert out.traces["t"].rounds[0].kept.files["m.py"] == "fixed"  # the retry proposed the fix
    events = out.ledger.events("r")
    tries = [(e.kind, e.detail["attempt"], e.detail["error_class"]) for e in events if e.role == Role.CONTROL]
    assert tries[:2] == [("attempt", 0, "INFRASTRUCTURE"), ("retry", 1, "")]
    assert not [e for e in events if undeclared(e.role, e.kind, e.detail)]


def test_policy_denied_stops_the_case_with_its_class_recorded() -> None:
    out = go(Model([MissingKey("no key")]), failures=FAILURES)
    assert out.stop.rule == "policy-denied" and "POLICY_DENIED" in out.stop.reason
    decision = next(e.detail for e in out.ledger.events("r") if e.kind == Kind.ERROR_DECISION)
    assert (decision["where"], decision["error_class"], decision["action"]) == ("propose", "POLICY_DENIED", "stop")


def test_an_unknown_effect_in_step_4_quarantines_the_case() -> None:
    def deploy(c: Candidate) -> None:
        raise UnknownEffect("sent, then timed out", action="deploy")

    out = go(Model([]), failures=FAILURES, build=deploy)
    assert out.stop.rule == "quarantine"
    decision = next(e.detail for e in out.ledger.events("r") if e.kind == Kind.ERROR_DECISION)
    assert (decision["where"], decision["child"], decision["action"]) == ("execute", "fix", "quarantine")


def test_a_failed_child_ends_only_that_child() -> None:
    def compile_(c: Candidate) -> None:
        compile("def (", "m.py", "exec")  # the candidate's own SyntaxError: TEST_FAILURE

    out = go(Model([]), failures=FAILURES, build=compile_, stop_at_green=False)
    first = out.traces["t"].rounds[0]
    assert first.decision.rule == "error-class" and "TEST_FAILURE" in first.attempts[0].decision.reason
    assert out.stop.rule == "round-cap"  # the case went on to its next round


def test_without_failures_a_model_error_is_the_rounds_proposal_failure() -> None:
    out = go(Model([ModelUnavailable("503")]))
    first = out.traces["t"].rounds[0]
    assert "ModelUnavailable" in first.reflection.failure and first.decision.rule == "reflection"
    assert not [e for e in out.ledger.events("r") if e.role == Role.CONTROL or e.kind == Kind.ERROR_DECISION]

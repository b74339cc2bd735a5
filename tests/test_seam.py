"""The engine's seam as frontier search uses it: billing a step, a paid step 4, keep with
severity, a pass/fail-only confirmation, and the search's events in the typed vocabulary."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from labkit.core.errors import BudgetExhausted, InvalidSetting, LedgerError, ModelUnavailable
from labkit.core.types import Candidate, Decision, Evidence, TestResult, Usage, Verdict
from labkit.grading.checkset import Check, CheckSet
from labkit.grading.sealed import SearchCase, load_search_case
from labkit.grading.verdicts import Checker
from labkit.loop import engine
from labkit.loop.engine.decide import decide
from labkit.loop.engine.steps import REFLECT_UPPER, Payment, Recorder, prepare, propose
from labkit.loop.engine.strategy import Child, Proposal, Situation
from labkit.loop.engine.trace import Task
from labkit.record.budget import Budget, limits
from labkit.record.events import Kind, Role
from labkit.record.ledger import Ledger
from labkit.record.vocabulary import VOCABULARY, undeclared

# -- simulated verdicts on a three-check set (labelled: no pytest runs here) ---------------

CHECKS = CheckSet("sim", (Check("t.py::a", "", "medium"), Check("t.py::b", "", "low"), Check("t.py::c", "", "high")))


def verdict(a: str, b: str, c: str, *, checks: CheckSet = CHECKS) -> Verdict:
    results = tuple(TestResult(ch.id, o) for ch, o in zip(checks.checks, (a, b, c), strict=True))  # type: ignore[arg-type]
    ok = {r.nodeid for r in results if r.outcome == "passed"}
    f2p, p2p = ("t.py::a", "t.py::b"), ("t.py::c",)
    return Verdict(
        Evidence(
            candidate="x",
            suite="suite",
            validator="validator",
            results=results,
            exit_code=0,
            wall_seconds=0.0,
            alarms=(),
        ),
        tuple(i for i in f2p if i in ok),
        tuple(i for i in f2p if i not in ok),
        tuple(i for i in p2p if i in ok),
        tuple(i for i in p2p if i not in ok),
    )


@dataclass
class Once:
    """A strategy (simulated) that answers with `reply`, or raises `error`."""

    reply: Proposal
    error: Exception | None = None
    name: str = "once (simulated)"
    simulated: bool = True
    calls: int = 0

    def propose(self, situation: Situation) -> Proposal:
        self.calls += 1
        if self.error is not None:
            raise self.error
        return self.reply


def recorder(total: float, reserve: float = 0.0) -> tuple[Recorder, Budget, Ledger]:
    led = Ledger()
    budget = Budget(limits(cost_units=total), confirmation=Usage(cost_units=reserve), ledger=led, run_id="r")
    return (
        Recorder(run_id="r", ledger=led, checker=Checker(), budget=budget, validation_cost=1.0, simulated=True),
        budget,
        led,
    )


def situation() -> Situation:
    return Situation(round=1, candidate=Candidate({"a.py": "x = 1\n"}), verdict=verdict("failed", "failed", "passed"))


def charges(led: Ledger) -> list[tuple[str, float, bool]]:
    return [
        (e.kind, e.cost_units, bool(e.detail.get("from_reserve")))
        for e in led.events("r")
        if e.role == Role.BUDGET and e.detail.get("status") == "settled"
    ]


# -- 2. generation billing ------------------------------------------------------------------


def test_propose_bills_reflect_by_default_and_the_callers_kind_and_cap_when_given() -> None:
    rec, _, led = recorder(10)
    propose(rec, Once(Proposal(note="n", usage=Usage(cost_units=0.5))), situation(), None, 0)
    assert charges(led) == [("reflect", 0.5, False)]  # today's default: the reply's own usage
    rec, budget, led = recorder(10)
    propose(
        rec,
        Once(Proposal(note="n", usage=Usage(cost_units=0.5))),
        situation(),
        None,
        0,
        payment=Payment.fixed(Kind.GENERATE, 3),
    )
    assert charges(led) == [("generate", 3.0, False)] and budget.spent.cost_units == 3
    # a declared price that does not fit is refused before the strategy is asked
    rec, _, _ = recorder(2)
    strategy = Once(Proposal())
    with pytest.raises(BudgetExhausted):
        propose(rec, strategy, situation(), None, 0, payment=Payment.fixed(Kind.GENERATE, 3))
    assert strategy.calls == 0 and REFLECT_UPPER.cost_units == 1


def test_a_model_error_is_a_proposal_failure_unless_the_caller_asks_for_it() -> None:
    rec, _, led = recorder(10)
    got, _ = propose(rec, Once(Proposal(), ModelUnavailable("503")), situation(), None, 0)
    assert got.failure.startswith("model call failed: ModelUnavailable")
    rec, _, led = recorder(10)
    with pytest.raises(ModelUnavailable):
        propose(
            rec,
            Once(Proposal(), ModelUnavailable("503")),
            situation(),
            None,
            0,
            payment=Payment.fixed(Kind.GENERATE, 3),
            model_errors="raise",
        )
    kinds = [(e.role, e.kind) for e in led.events("r") if e.role != Role.BUDGET]
    assert kinds == [("reflector", "error")]  # recorded before it is handed back
    unknown = [(e.kind, e.cost_units) for e in led.events("r") if e.detail.get("status") == "unknown"]
    assert charges(led) == [] and unknown == [("generate", 3.0)]  # its use unknown: paid in full


# -- 3. a paid step 4 -------------------------------------------------------------------------


def test_prepare_is_unpaid_by_default_and_one_paid_action_when_given_a_payment(tmp_path) -> None:
    from labkit.grading.acceptance import AcceptanceSuite

    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("def test_a():\n    assert True\n")
    suite = AcceptanceSuite.from_dir(tmp_path, name="s", fail_to_pass=["tests/test_a.py::test_a"], pass_to_pass=())
    start = Candidate({"a.py": "x = 1\n"})
    task = Task(id="t", start=start, suite=suite)
    rec, budget, led = recorder(10)
    p = prepare(rec, task, 1, start, Child(target=Candidate({"a.py": "x = 2\n"}), name="two"))
    assert p.patched is not None and charges(led) == []
    pay = Payment.fixed(Kind.EXECUTE, 2)
    p = prepare(rec, task, 1, start, Child(target=Candidate({"a.py": "x = 3\n"}), name="three"), payment=pay)
    assert p.patched is not None and charges(led) == [("execute", 2.0, False)]
    # a refused child (an edit of a protected test) is still paid: the step ran
    tamper = Candidate({**start.files, "tests/test_a.py": "def test_a(): pass\n"})
    p = prepare(rec, task, 1, start, Child(target=tamper, name="tamper"), payment=pay)
    assert p.refusal is not None and p.refusal.rule == "integrity"
    # `build` runs inside the paid step; what it raises is the candidate's and propagates
    with pytest.raises(SyntaxError):
        prepare(
            rec,
            task,
            1,
            start,
            Child(target=Candidate({"a.py": "x = (\n"}), name="bad"),
            payment=pay,
            build=lambda c: compile(c.files["a.py"], "a.py", "exec"),
        )
    assert budget.spent.cost_units == 6
    generated = [e.detail["proposal"] for e in led.events("r") if e.kind == "generate"]
    assert generated == ["two", "three", "bad"]


# -- 4. keep with severity ------------------------------------------------------------------


def test_keep_severity_never_counts_skips_versions_or_masked_severe_failures() -> None:
    before = verdict("failed", "failed", "passed")
    ok = decide(before, verdict("passed", "failed", "passed"), keep="severity", checks=CHECKS)
    assert (ok.decision, ok.rule) == (Decision.KEEP, "progress")
    skipped = decide(before, verdict("passed", "skipped", "passed"), keep="severity", checks=CHECKS)
    assert (skipped.decision, skipped.rule) == (Decision.ROLL_BACK, "severity") and "not run" in skipped.reason
    # the same fix counted by plain ΔF is kept: the severity mode is what refuses it
    assert decide(before, verdict("passed", "skipped", "passed"), keep="no_worse").decision is Decision.KEEP
    severe = decide(before, verdict("passed", "passed", "failed"), keep="severity", checks=CHECKS)
    assert (severe.decision, severe.rule) == (Decision.ROLL_BACK, "severity") and "t.py::c" in severe.reason
    light = CheckSet("sim", (Check("t.py::a", "", "low"), Check("t.py::b", "", "low"), Check("t.py::c", "", "medium")))
    masked = decide(before, verdict("passed", "passed", "failed", checks=light), keep="severity", checks=light)
    assert masked.decision is Decision.ROLL_BACK and "mask" in masked.reason
    versioned = CheckSet("sim", (*CHECKS.checks[:2], Check("t.py::c", "v2", "high")))
    changed = decide(before, verdict("passed", "failed", "passed"), keep="severity", checks=versioned)
    assert changed.decision is Decision.KEEP  # same version on both sides: comparable
    with pytest.raises(ValueError, match="needs the check set"):
        decide(before, before, keep="severity")


def test_the_engine_refuses_keep_severity_without_the_checks() -> None:
    case = load_search_case("api_change")
    task = Task(id="c", start=case.case.start, suite=case.suite)
    with pytest.raises(InvalidSetting, match="severity"):
        engine.run([task], Once(Proposal()), keep="severity")


# -- 5. the sealed final set: pass/fail only --------------------------------------------------


@pytest.fixture(scope="module")
def case() -> SearchCase:
    return load_search_case("api_change")


def test_recorder_confirm_returns_a_bool_and_leaks_nothing(case: SearchCase) -> None:
    from labkit.core.patch import apply

    rec, budget, led = recorder(5, reserve=2)
    task = Task(id="api", start=case.case.start, suite=case.suite, hidden=case.final)
    fixed = apply(case.case.start, case.case.patches["fix_callers"])
    pay = Payment.fixed(Kind.CONFIRM, 2)
    assert rec.confirm(task, 1, case.case.start) is False
    assert rec.confirm(task, 1, fixed, payment=pay) is True
    assert charges(led) == [("confirm", 2.0, True)]  # paid from the confirmation reserve
    assert len(rec.checker.cache) == 0  # no verdict kept anywhere
    text = " ".join(f"{e.evidence} {e.detail}" for e in led.events("r"))
    assert "test_final" not in text and "final/" not in text  # no test names reach the ledger
    with pytest.raises(ValueError, match="no sealed final check set"):
        rec.confirm(Task(id="x", start=case.case.start, suite=case.suite), 1, fixed)


def test_there_is_one_sealed_confirmation_and_one_flakiness_recheck(case: SearchCase, monkeypatch) -> None:
    """Recorder.confirm runs the sealed set through SealedCheckSet.confirm, and the engine's
    `recheck=` and Checker.recheck both re-run through grading.verdicts.rerun."""
    from labkit.grading import sealed, verdicts
    from labkit.loop.engine import runner

    confirmed: list[str] = []
    real = sealed.SealedCheckSet.confirm
    monkeypatch.setattr(
        sealed.SealedCheckSet, "confirm", lambda self, c: confirmed.append(self.digest) or real(self, c)
    )
    rec, _, _ = recorder(5, reserve=2)
    assert (
        rec.confirm(Task(id="api", start=case.case.start, suite=case.suite, hidden=case.final), 1, case.case.start)
        is False
    )
    assert confirmed == [case.final.digest]
    reruns: list[int] = []
    real_rerun = verdicts.rerun
    spy = lambda first, again, k, evidence, **kw: reruns.append(k) or real_rerun(first, again, k, evidence, **kw)  # noqa: E731
    monkeypatch.setattr(verdicts, "rerun", spy)
    monkeypatch.setattr(runner, "rerun", spy)
    checker = Checker()
    assert len(checker.recheck(case.case.start, case.suite, 1, until_disagreement=False)) == 2
    out = engine.run(
        [Task(id="api", start=case.case.start, suite=case.suite)], Once(Proposal()), checker, rounds=0, recheck=1
    )
    verified = [e.detail["why"] for e in out.ledger.events(out.run_id) if e.kind == Kind.VERIFY]
    assert reruns == [1, 1] and verified == ["start", "re-run 1 (uncached)"]


def test_rerun_stops_at_the_first_disagreement_unless_told_not_to() -> None:
    from labkit.grading.verdicts import rerun

    def ev(outcome: str) -> Evidence:
        return Evidence(
            candidate="c",
            suite="s",
            validator="v",
            results=(TestResult("t::a", outcome),),
            exit_code=0,
            wall_seconds=0.1,
        )

    outcomes = iter(["passed", "failed", "passed", "passed"])
    runs = rerun(ev("passed"), lambda: ev(next(outcomes)), 4, lambda e: e)
    assert [r.results[0].outcome for r in runs] == ["passed", "passed", "failed"]  # stopped at the flip
    outcomes = iter(["failed", "passed"])
    assert len(rerun(ev("passed"), lambda: ev(next(outcomes)), 2, lambda e: e, until_disagreement=False)) == 3


# -- 1. the search's events are in the vocabulary --------------------------------------------


def test_every_search_event_is_declared_and_an_undeclared_field_is_refused(case: SearchCase) -> None:
    from labkit.loop.control.units import units_of
    from labkit.loop.search.search_case import search_run

    led = Ledger()
    out = search_run(case, Checker(), total=15, reserve=2, ledger=led, run_id="v")  # engine.run, configured
    events = led.events("v")
    assert not [e for e in events if e.role == Role.SEARCH]  # the search writes only the engine's events
    for e in events:
        assert undeclared(e.role, e.kind, e.detail) == [], (e.role, e.kind, e.detail)
    assert {(r, k) for r, k in VOCABULARY} >= {(Role(e.role), Kind(e.kind)) for e in events if e.role != Role.BUDGET}
    assert units_of(events) == {"v"}  # three branches and their retry bookkeeping: one experimental unit
    # the search read back from them: every step, the budget stop among them
    assert {s.kind for s in out.readback.steps} == {
        Kind.DEFINE,
        Kind.EXPAND,
        Kind.BRANCH,
        Kind.SEAL,
        Kind.CONFIRM,
        Kind.ERROR_DECISION,
        Kind.STOP,
    }
    assert undeclared(Role.SEARCH, Kind.BRANCH, {"unit": "u", "hidden_failures": []}) == ["hidden_failures"]
    assert undeclared(Role.VALIDATOR, Kind.EXPAND, {"unit": "u"}) != []  # not the validator's kind: refused whole
    with pytest.raises(LedgerError, match="'expand' events by role 'validator'"):
        Recorder(run_id="x", ledger=led, checker=Checker(), budget=None, validation_cost=0.0, simulated=True).log(
            None, 0, Role.VALIDATOR, Kind.EXPAND, detail={"unit": "u"}
        )

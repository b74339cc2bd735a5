"""A worked test change (seed 000): the free-shipping case, whose protected test is wrong.

The ticket said "free shipping over 50"; its author wrote a protected test that an order of
exactly 50 still pays. The pricing policy (REQ-7, signed off by the product owner) says
orders of 50 **or more** ship free. Run for real:

1. the engine, offered both fixes as rivals, keeps "free above 50 only" — the wrong one,
   because the protected test says so — and rolls back the one the policy asks for;
2. changing the test is refused without evidence, and refused with a "requirement" the
   loop's own strategy wrote;
3. with REQ-7 it is accepted: one recorded TEST_CHANGE event (evidence, old/new digests),
   every candidate scored under the old suite re-validated — the verdicts swap;
4. the engine re-run under the new suite keeps the policy's fix.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

from labkit.core.errors import CaseError, TestChangeRefused
from labkit.experiments.case_task import task_of
from labkit.grading.cases import Case, load_case
from labkit.grading.verdicts import Checker
from labkit.loop.control.test_change import ChangeOutcome, Requirement, TestChange, change_test
from labkit.loop.engine import EngineRun, Task, run
from labkit.loop.strategies.rewrite import Rivals
from labkit.record.events import Kind
from labkit.record.ledger import Event, Ledger

__all__ = ["Walkthrough", "change", "engine_round", "requirements", "walkthrough"]

CASE = "free_shipping"
STRATEGY = "scripted: shipping rivals"


def requirements(c: Case) -> dict[str, Requirement]:
    if c.spec.requirements is None:
        raise CaseError(f"{c.root / 'case.json'}: field 'requirements' is required for a test-change case")
    rows = json.loads(c.path(c.spec.requirements).read_text(encoding="utf-8"))
    return {r["id"]: Requirement(r["id"], r["author"], r["source"], r["text"], tuple(r["concerns"])) for r in rows}


def change(c: Case) -> TestChange:
    spec = c.spec.change
    if spec is None:
        raise CaseError(f"{c.root / 'case.json'}: field 'change' is required for a test-change case")
    text = c.path(spec.file).read_text(encoding="utf-8")
    return TestChange(spec.path, text, proposed_by=STRATEGY, replaces=dict(spec.replaces))


@dataclass(frozen=True)
class Walkthrough:
    before: EngineRun
    refusals: tuple[tuple[str, str], ...]  # (evidence offered, why refused)
    outcome: ChangeOutcome
    after: EngineRun
    ledger: Ledger

    def kept(self, run: EngineRun) -> str:
        return run.traces[run.tasks[0].id].final.label

    def accepted(self) -> Event:
        """The recorded, accepted TEST_CHANGE event."""
        return next(e for e in self.ledger.events() if e.kind == Kind.TEST_CHANGE and e.detail["accepted"])


def engine_round(c: Case, task: Task, led: Ledger, checker: Checker, run_id: str) -> EngineRun:
    """One engine round on `task` with both fixes proposed as rivals."""
    rivals = Rivals(tuple((n, c.patch(n)) for n in ("inclusive", "exclusive")), name=STRATEGY)
    return run([task], rivals, checker, rounds=1, ledger=led, run_id=run_id)


def walkthrough(checker: Checker | None = None) -> Walkthrough:
    c = load_case(CASE)
    checker = checker or Checker()
    led = Ledger()
    task = task_of(c)
    before = engine_round(c, task, led, checker, "shipping-before")
    trace = before.traces[task.id]
    pool = {c.start.digest: c.start, **{a.patched.digest: a.patched for a in trace.rounds[0].attempts if a.patched}}
    reqs, proposed = requirements(c), change(c)
    refusals = []
    for offered in (None, reqs["NOTE-1"]):
        try:
            change_test(c.suite, proposed, offered, pool=pool, checker=checker, ledger=led, run_id="shipping-change")
        except TestChangeRefused as exc:
            refusals.append(("none" if offered is None else f"{offered.id} by {offered.author}", str(exc)))
    outcome = change_test(
        c.suite, proposed, reqs["REQ-7"], pool=pool, checker=checker, ledger=led, run_id="shipping-change"
    )
    after = engine_round(c, replace(task, suite=outcome.new), led, checker, "shipping-after")
    return Walkthrough(before, tuple(refusals), outcome, after, led)

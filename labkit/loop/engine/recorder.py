"""The one place that writes a run's ledger and pays its budget: `Recorder`, and how steps are billed.

`Recorder` logs every event (kinds from `labkit.record.events`) and charges every paid action;
`Recorder.check` is steps 2 and 5 through the one verdict cache; `Recorder.confirm` runs a case's
sealed final set (its hidden suite) through the one sealed confirmation, `SealedCheckSet`, and lets
only pass/fail out. A `Payment` says how a step is billed (its budget kind, its upper bound and how
its actual use is measured); `Prices` is a run's price list for steps 3 and 4.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from labkit.core.errors import ValidatorMismatch
from labkit.core.types import Candidate, Usage, Verdict
from labkit.grading.sealed import SealedCheckSet
from labkit.grading.verdicts import Checked, Checker, verdict_json
from labkit.loop.engine.trace import Task
from labkit.record.events import Kind, Role
from labkit.record.exposure import refuse_exposed

if TYPE_CHECKING:
    from labkit.record.budget import Budget
    from labkit.record.ledger import Ledger

__all__ = [
    "REFLECT",
    "REFLECT_UPPER",
    "Paid",
    "Payment",
    "Prices",
    "Recorder",
    "candidate_from_json",
    "candidate_json",
]

T = TypeVar("T")
REFLECT_UPPER = Usage(tokens=4096, calls=1, wall_seconds=120, cost_units=1)


@dataclass(frozen=True)
class Payment:
    """How one step is billed: reserve `upper` as `kind`, settle `measure(result)`.

    `measure=None` settles the declared `upper` itself (a fixed price, e.g. a declared cost
    model's "generate 3"). `Payment.fixed(kind, units)` is that price in cost units."""

    kind: Kind
    upper: Usage
    measure: Callable[[Any], Usage] | None = None

    @classmethod
    def fixed(cls, kind: Kind, cost_units: float) -> Payment:
        return cls(kind, Usage(cost_units=cost_units))

    def measured(self, out: Any) -> Usage:
        return self.upper if self.measure is None else self.measure(out)


REFLECT = Payment(Kind.REFLECT, REFLECT_UPPER, lambda p: p.usage)


@dataclass(frozen=True)
class Prices:
    """A run's price list: how each proposal (step 3) and each step 4 is billed. The default
    bills a proposal by its own usage and leaves step 4 unpaid; a search case declares fixed
    costs instead, e.g. `Prices(Payment.fixed(Kind.GENERATE, 3), Payment.fixed(Kind.EXECUTE, 2))`."""

    propose: Payment = REFLECT
    execute: Payment | None = None
    start: bool = True  # False: each start's verdict is the task's input (a search's baseline), not billed

    def listed(self, validation: float) -> dict[str, float]:
        """The fixed prices in cost units, by budget kind (a measured price is listed at its cap)."""
        out = {str(self.propose.kind): self.propose.upper.cost_units}
        if self.execute is not None:
            out[str(self.execute.kind)] = self.execute.upper.cost_units
        return {**out, str(Kind.VERIFY): validation}


def candidate_json(c: Candidate) -> str:
    return json.dumps({"label": c.label, "parent": c.parent, "files": dict(c.files)}, sort_keys=True)


def candidate_from_json(text: str) -> Candidate:
    data = json.loads(text)
    return Candidate(files=data["files"], label=data.get("label", ""), parent=data.get("parent"))


@dataclass(frozen=True)
class Paid(Checked):
    """A validation's verdict and what this run paid for it in cost units (see `Recorder.check`)."""

    cost_units: float = 0.0


@dataclass(kw_only=True)
class Recorder:
    """Ledger writes, budget charges and validation for one run."""

    run_id: str
    ledger: Ledger
    checker: Checker
    budget: Budget | None
    validation_cost: float
    simulated: bool
    usage: Usage = field(default_factory=Usage)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _paid: set[tuple[str, str, str]] = field(default_factory=set, repr=False)  # (candidate, suite, validator)

    def paid_before(self, keys: Iterable[tuple[str, str, str]]) -> None:
        """Keys this run paid for before (a resumed run's, read from its ledger): repeats are free."""
        with self._lock:
            self._paid.update(keys)

    def log(
        self,
        task: Task | None,
        rnd: int,
        role: Role,
        kind: Kind,
        *,
        inputs: str | None = None,
        outputs: str | None = None,
        evidence: object = None,
        usage: Usage | None = None,
        started: float | None = None,
        detail: Mapping[str, object] | None = None,
    ) -> None:
        base: dict[str, object] = {}
        if task is not None:
            base = {"suite": task.suite.digest, "case": task.id, "slice": task.slice}
        base["simulated"] = self.simulated  # the ledger refuses a field the vocabulary does not declare
        self.ledger.record(
            self.run_id,
            rnd,
            str(role),
            str(kind),
            inputs=inputs,
            outputs=outputs,
            evidence=evidence,
            usage=usage or Usage(),
            started_at=started,
            ended_at=time.time(),
            detail={**base, **(detail or {})},
        )

    def charge(
        self,
        kind: Kind,
        fn: Callable[[], T],
        upper: Usage,
        measure: Callable[[T], Usage],
        rnd: int,
        *,
        for_confirmation: bool = False,
    ) -> T:
        """Run `fn` under the budget (reserve `upper`, settle `measure(result)`), if there is one.

        `for_confirmation=True` may draw on the budget's confirmation reserve."""
        if self.budget is None:
            out = fn()
        else:
            from labkit.record.budget import Operation

            op = Operation(fn, upper=upper, measure=measure)
            out = self.budget.paid(str(kind), op, for_confirmation=for_confirmation, round=rnd)
        with self._lock:  # validations may run on a thread pool
            self.usage = self.usage + measure(out)
        return out

    def check(
        self,
        task: Task,
        rnd: int,
        candidate: Candidate,
        *,
        hidden: bool = False,
        fresh: bool = False,
        given: bool = False,
    ) -> Paid:
        """One validation through the cache, paid through the budget as this run's own.

        The price depends on this run alone, never on what the shared cache holds: the first
        time this run validates a (candidate, suite, validator) it pays `validation_cost`, even
        when the verdict comes from the cache (another run's, another arm's); otherwise a job's
        cost units, and whether it can afford its next step, would depend on job order and on
        which jobs shared a process. A repeat of the same key within this run is free: the run
        already paid for that verdict (best-of-N's identical samples cost one validation), and
        it stays free even if the verdict was not cached (a timeout or alarm is never stored) so
        that the price never depends on the cache's state. A `fresh` re-run (probing
        flakiness) is a deliberate extra validation: always paid. The hidden suite is the lab's
        scoring: never paid; nor is a `given` verdict, the task's input (a search's start).
        Wall time is measured as spent (0 on a cache hit)."""
        suite = task.hidden if hidden and task.hidden is not None else task.suite
        if hidden or given:  # the lab's scoring, or the task's input: not something the loop pays for
            ch = self.checker.check(candidate, suite, use_cache=not fresh)
            return Paid(ch.verdict, ch.cached, 0.0)
        key = (candidate.digest, suite.digest, self.checker.id)
        with self._lock:  # claimed here so two threads validating the same key pay once
            first = fresh or key not in self._paid
            self._paid.add(key)
        cost = self.validation_cost if first else 0.0
        hit = None if fresh else self.checker.cache.get(self.checker.key(candidate, suite))
        if hit is not None and cost == 0.0:
            return Paid(hit, True, 0.0)

        def validate() -> Paid:
            ch = Checked(hit, True) if hit is not None else self.checker.check(candidate, suite, use_cache=False)
            return Paid(ch.verdict, ch.cached, cost)

        lim = self.checker.validator.limits.wall_seconds
        try:
            return self.charge(
                Kind.VERIFY,
                validate,
                Usage(wall_seconds=lim + 30, cost_units=cost),
                lambda c: Usage(wall_seconds=c.seconds, cost_units=c.cost_units),
                rnd,
            )
        except BaseException:
            if first and not fresh:  # not paid after all (e.g. the budget refused): not this run's yet
                with self._lock:
                    self._paid.discard(key)
            raise

    def pay(self, payment: Payment, fn: Callable[[], T], rnd: int, *, for_confirmation: bool = False) -> T:
        """`charge` with a Payment."""
        return self.charge(payment.kind, fn, payment.upper, payment.measured, rnd, for_confirmation=for_confirmation)

    def confirm(self, task: Task, rnd: int, candidate: Candidate, *, payment: Payment | None = None) -> bool:
        """The case's sealed final check set (its hidden suite) on `candidate`: pass/fail only.

        The verdict never leaves this method: it is not returned, cached, or written to the
        ledger (no failing test names, messages or output), so it can never become a repair
        context. With a `payment`, the run is paid from the confirmation reserve. A final set
        authorised as development material (`labkit.record.exposure`) raises ExposedFinalSet."""
        if task.hidden is None:
            raise ValueError(f"case {task.id!r} has no sealed final check set (no hidden suite)")
        refuse_exposed(self.ledger, task.hidden.digest, task.id)  # an exposed final set confirms nothing
        run = partial(SealedCheckSet(task.hidden, self.checker.validator).confirm, candidate)
        return run() if payment is None else self.pay(payment, run, rnd, for_confirmation=True)

    def verified(
        self, task: Task, rnd: int, candidate: Candidate, checked: Paid, before: Verdict | None, why: str
    ) -> Verdict:
        """Record a visible validation (steps 2 and 5) and return its verdict."""
        verdict = checked.verdict
        if before is not None and (
            before.evidence.suite != verdict.evidence.suite or before.evidence.validator != verdict.evidence.validator
        ):
            raise ValidatorMismatch("re-test on a different suite or validator than the failure")
        cost = checked.cost_units  # what this run paid (see `check`); `cached` is wall time saved
        self.log(
            task,
            rnd,
            Role.VALIDATOR,
            Kind.VERIFY,
            inputs=candidate_json(candidate),
            outputs=verdict.evidence.digest,
            evidence=verdict.report() | {"alarms": list(verdict.evidence.alarms), "verdict": verdict_json(verdict)},
            usage=Usage(wall_seconds=checked.seconds, cost_units=cost),
            detail={
                "candidate": candidate.digest,
                "label": candidate.label,
                "validator": self.checker.id,
                "resolved": verdict.resolved,
                "cross_checked": verdict.cross_checked,
                "retest": before is not None,
                "cached": checked.cached,
                "why": why,
            },
        )
        if verdict.quarantined:
            self.log(
                task,
                rnd,
                Role.VALIDATOR,
                Kind.ALARM,
                inputs=candidate_json(candidate),
                evidence=list(verdict.evidence.alarms),
                detail={"candidate": candidate.digest, "quarantined": True},
            )
        return verdict

    def scored(
        self, task: Task, rnd: int, candidate: Candidate, checked: Checked | None, visible: Verdict, state: str
    ) -> None:
        """Record one case's correctness after a round: hidden scoring if it has hidden tests."""
        correct = checked.verdict.resolved if checked is not None else visible.resolved
        evidence = None
        if checked is not None:
            e = checked.verdict.evidence
            evidence = {"candidate": e.candidate, "suite": e.suite, "validator": e.validator, "digest": e.digest,
                        "resolved": correct, "failing": [r.nodeid for r in e.failures]}  # fmt: skip
        self.log(
            task,
            rnd,
            Role.SCORER,
            Kind.SCORE,
            evidence=evidence,
            usage=Usage(wall_seconds=checked.seconds if checked is not None else 0.0),
            detail={
                "candidate": candidate.digest,
                "correct": correct,
                "visible": visible.resolved,
                "state": state,
                "scored_on": "hidden" if checked is not None else "visible",
                "cached": checked.cached if checked is not None else True,
            },
        )

"""Children validated one after another: a checkpointed sequence, and a priced step 4.

`Runner` (labkit.loop.engine.runner) validates a round's children together (in parallel when
nothing is paid). Two cases need them one at a time, and this mixin holds both:

- a proposal whose children are dependent steps (`Proposal.sequence`): each is applied to the
  last green checkpoint, validated and recorded; the first that does not apply or is not green
  ends the sequence, and the last green checkpoint is decided as one change;
- a run with a declared price for step 4 (`Prices.execute`, a search's price list): a child is
  executed only if the budget can also pay for its validation, then validated before the next
  is executed; when the budget runs out, what was validated is still decided.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from labkit.core.errors import BudgetExhausted
from labkit.core.types import Decision, DecisionRecord, Verdict
from labkit.loop.engine.decide import Keep, decide
from labkit.loop.engine.ending import CaseState
from labkit.loop.engine.failure_policy import Failures, Obeyed
from labkit.loop.engine.recorder import Paid, Payment, Prices, Recorder
from labkit.loop.engine.steps import Prepared, prepare
from labkit.loop.engine.stopping import Step, Verification
from labkit.loop.engine.strategy import Child, Proposal
from labkit.loop.engine.trace import Attempt
from labkit.record.events import Kind, Role

__all__ = ["OneAtATime"]


class OneAtATime:
    """Mixed into `Runner`, whose dataclass fields these are."""

    rec: Recorder
    keep: Keep
    on_alarm: str
    prices: Prices
    steps: list[Step]
    verifications: list[Verification]
    failures: Failures | None
    retests: dict[int, Verdict]

    if TYPE_CHECKING:  # OneRound's (labkit.loop.engine.one_round), the class mixing this in

        def _prepare(self, r: int, c: CaseState, child: Child, payment: Payment | None) -> Prepared | Obeyed: ...
        def _check(self, r: int, c: CaseState, p: Prepared) -> Paid: ...
        def _verified(self, r: int, c: CaseState, p: Prepared, checked: Paid) -> Verdict: ...
        def _alarmed(self, r: int, c: CaseState, p: Prepared, verdict: Verdict) -> Obeyed: ...

    def _policy(self, d: DecisionRecord) -> DecisionRecord:
        """The run's alarm policy: by default an alarmed child is quarantined (its verdict and
        alarm are recorded) and rolled back, and the case goes on with the next proposal."""
        if d.decision is Decision.STOP and d.rule == "integrity" and self.on_alarm == "continue":
            return DecisionRecord(
                Decision.ROLL_BACK,
                f"{d.reason} (quarantined: rolled back, the run goes on)",
                "integrity",
            )
        return d

    def _priced(
        self, r: int, c: CaseState, children: Sequence[Child], results: dict[int, Paid]
    ) -> tuple[list[Prepared], BudgetExhausted | Obeyed | None]:
        """Step 4 at its declared price, then step 5, child by child (results go into `results`).
        A child whose step 4 and validation together do not fit what is left is not executed:
        the budget is exhausted, and the children validated so far are returned with it (as
        they are with a failure whose class stops the case)."""
        assert self.prices.execute is not None
        need = self.prices.execute.upper.cost_units + self.rec.validation_cost
        prepared: list[Prepared] = []
        for child in children:
            left = self.rec.budget.available.cost_units if self.rec.budget is not None else math.inf
            if need > left + 1e-9:
                why = (
                    f"child {child.name or child.source!r}: step 4 + validation cost {need:g} cost units, {left:g} left"
                )
                return prepared, BudgetExhausted(why)
            try:
                p = self._prepare(r, c, child, self.prices.execute)
                if isinstance(p, Obeyed):
                    return prepared, p
                if p.patched is not None:  # validated and recorded before the next child runs
                    results[id(p)] = self._check(r, c, p)
                    self.retests[id(p)] = v = self._verified(r, c, p, results[id(p)])
                    if v.quarantined and self.failures is not None:
                        return [*prepared, p], self._alarmed(r, c, p, v)
            except BudgetExhausted as exc:
                return prepared, exc
            prepared.append(p)
        return prepared, None

    def _checkpoints(
        self, r: int, c: CaseState, proposal: Proposal
    ) -> tuple[list[Attempt], Attempt | None, DecisionRecord | None]:
        """A proposal whose children are dependent steps: each is applied to the last green
        checkpoint, validated and recorded; the first that does not apply or is not green
        (a protective test breaks, visible failures grow, an alarm) ends the sequence, and the
        case returns to the last green checkpoint, which is then decided as one change. Returns the
        attempts, the one decided and its decision (for `Runner._hold`)."""
        base, base_verdict = c.candidate, c.verdict
        attempts: list[Attempt] = []
        green: Attempt | None = None
        for i, child in enumerate(proposal.children, start=1):
            p = prepare(self.rec, c.task, r, base, child, payment=self.prices.execute)
            if p.refusal is not None:
                attempts.append(Attempt(child, None, None, None, self._policy(p.refusal)))
                self.rec.log(
                    c.task,
                    r,
                    Role.DECISION,
                    Kind.CHECKPOINT,
                    detail={
                        "step": i,
                        "applied": False,
                        "green": False,
                        "reason": p.refusal.reason,
                        "candidate": base.digest,
                    },
                )
                break
            assert p.patched is not None
            after = self.rec.verified(
                c.task,
                r,
                p.patched,
                self.rec.check(c.task, r, p.patched),
                base_verdict,
                f"step {i}",
            )
            self.verifications.append(Verification.of(after.evidence, c.task.id))
            d = self._policy(decide(base_verdict, after, p.size_problem, "no_worse"))
            ok = d.decision is Decision.KEEP
            attempts.append(Attempt(child, p.patched, p.size, after, d))
            self.steps.append(Step.of(c.task.id, r, after.evidence, kept=ok))
            self.rec.log(
                c.task,
                r,
                Role.DECISION,
                Kind.CHECKPOINT,
                detail={
                    "step": i,
                    "applied": True,
                    "green": ok,
                    "resolved": after.resolved,
                    "reason": d.reason,
                    "candidate": (p.patched if ok else base).digest,
                },
            )
            if not ok:
                break
            base, base_verdict, green = p.patched, after, attempts[-1]
        if green is None or green.retest is None:
            first = attempts[0] if attempts else None
            return attempts, first, first.decision if first else None
        decision = self._policy(decide(c.verdict, green.retest, "", self.keep, c.task.checks))
        return attempts, green, decision

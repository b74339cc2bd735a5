"""One lockstep round of the engine: steps 3 to 6 for every active case, then the case rules.

`Runner` (labkit.loop.engine.runner) starts the cases and runs the rounds; `OneRound`, mixed
into it, is what happens inside one: each case's strategy proposes (step 3) from the held state
or, with a frontier, from the next waiting state; the children are prepared (step 4) and
validated together (step 5, in parallel when nothing is paid), or one at a time for a priced
step 4 or a checkpointed sequence (`OneAtATime`); each case then keeps its best kept child or
holds (step 6), kept children grow the frontier, and every case is scored.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from labkit.core.error_classes import Classified, ErrorClass
from labkit.core.errors import BudgetExhausted, IntegrityAlarm, PatchError
from labkit.core.types import Candidate, Decision, DecisionRecord, Verdict
from labkit.grading.verdicts import Checked
from labkit.loop.engine.decide import best, decide
from labkit.loop.engine.ending import CaseState
from labkit.loop.engine.expand import FrontierLimits, Node
from labkit.loop.engine.failure_policy import Failures, Obeyed, obey, retried
from labkit.loop.engine.probe import Observation
from labkit.loop.engine.recorder import Paid, Payment, candidate_json
from labkit.loop.engine.sequential import OneAtATime
from labkit.loop.engine.steps import Prepared, detail_of, prepare, situation_for
from labkit.loop.engine.steps import propose as ask
from labkit.loop.engine.stopping import History, Step, Stop, StopRecord, Verification
from labkit.loop.engine.strategy import Child, Proposal, Situation, Strategy
from labkit.loop.engine.trace import Attempt, Round, Task
from labkit.record.events import Kind, Role

__all__ = ["OneRound"]

T = TypeVar("T")
# step 4's refusals, classified like the errors they are when a run classifies failures
_REFUSED: dict[str, Callable[[str], Exception]] = {
    "integrity": lambda why: IntegrityAlarm([why]),
    "patch": PatchError,
    "no-change": PatchError,
}


class OneRound(OneAtATime):
    """Mixed into `Runner`, whose dataclass fields these are."""

    strategy: Strategy
    max_experiments: int
    limits: FrontierLimits
    cases: dict[str, CaseState]
    risk: dict[int, float]
    _before: dict[str, tuple[Candidate, Verdict, str]]
    failures: Failures | None  # None: a model error is the proposal's failure, any other interrupts
    retests: dict[int, Verdict]  # children verified one at a time (see _priced), by id of their Prepared
    unexecuted: dict[str, tuple[str, ...]]  # per case: children the budget could not execute this round
    build: Callable[[Candidate], object] | None  # run on each executed candidate inside step 4

    if TYPE_CHECKING:  # the Runner's own, used here

        def _map(self, fn: Any, items: Sequence[Any]) -> list[Any]: ...
        def _score_check(self, task: Task, candidate: Candidate) -> Checked | None: ...
        def _case_rules(self, r: int, fresh_only: set[str] | None = None) -> History: ...
        def _case_stop(self, c: CaseState, r: int, record: StopRecord) -> None: ...

    def _round(self, r: int, active: list[CaseState]) -> History:
        before = {cid: (c.candidate, c.verdict, c.state) for cid, c in self.cases.items()}
        work: list[tuple[CaseState, Proposal, tuple[Observation, ...], list[Prepared]]] = []
        results: dict[int, Paid] = {}
        exhausted: BudgetExhausted | None = None
        halted: dict[str, Obeyed] = {}  # cases a failure's class stops after this round's decisions
        for c in active:
            if c.frontier is not None:  # expand the next waiting state
                node = c.frontier.pop()
                assert node is not None  # an empty frontier stopped the case before the round
                c.candidate, c.verdict, c.state, c.depth = node.candidate, node.verdict, node.state, node.depth
                c.path = node.path
            last = c.rounds[-1].attempts if c.rounds else ()
            situation = situation_for(r, c.task, c.candidate, c.verdict, tuple(c.rejected), c.state, last, c.path)
            asked = self._ask(r, c, situation)
            if asked is None:  # its failure's class stopped the case
                continue
            proposal, obs = asked
            if proposal.sequence:  # dependent steps: validated one after another, below
                work.append((c, proposal, obs, []))
                continue
            if c.frontier is not None:  # the engine keeps only the first children
                proposal = replace(proposal, children=proposal.children[: self.limits.max_children])
            if self.prices.execute is not None:  # a priced step 4: one child at a time, see _priced
                prepared, ended = self._priced(r, c, proposal.children, results)
                work.append((c, proposal, obs, prepared))
                if isinstance(ended, Obeyed):  # decided below, then the case stops
                    halted[c.task.id] = ended
                elif ended is not None:  # the children not executed are recorded with the decision
                    exhausted = ended
                    self.unexecuted[c.task.id] = tuple(
                        ch.name or ch.source for ch in proposal.children[len(prepared) :]
                    )
                    break
                continue
            prepared = []
            for ch in proposal.children:
                p = self._prepare(r, c, ch, None)
                if isinstance(p, Obeyed):
                    halted[c.task.id] = p
                    break
                prepared.append(p)
            work.append((c, proposal, obs, prepared))
        jobs = [
            (c, p) for c, _, _, prepared in work for p in prepared if p.patched is not None and id(p) not in results
        ]
        checked = self._map(lambda job: self._check(r, job[0], job[1]), jobs)
        results.update({id(p): ch for (_, p), ch in zip(jobs, checked, strict=True)})
        risk = 0.0
        for c, proposal, obs, prepared in work:
            if proposal.sequence:
                risk += self._hold(r, c, proposal, obs, *self._checkpoints(r, c, proposal))
            else:
                risk += self._decide(r, c, proposal, obs, prepared, results)
        self.risk[r] = risk
        for cid, ob in halted.items():
            self._halt(r, self.cases[cid], ob)
        active = [c for c, *_ in work]  # every active case, unless the budget ran out mid-round
        scores = self._map(lambda c: self._score_check(c.task, c.candidate), active)
        for c, score in zip(active, scores, strict=True):
            self.rec.scored(c.task, r, c.candidate, score, c.verdict, c.state)
            c.scored.add(r)
        self._before = before
        if exhausted is not None:  # what was validated is decided and scored; then the run stops
            raise exhausted
        return self._case_rules(r)

    def _decide(
        self,
        r: int,
        c: CaseState,
        proposal: Proposal,
        obs: tuple[Observation, ...],
        prepared: list[Prepared],
        results: dict[int, Paid],
    ) -> float:
        """Steps 5 and 6 for one case: record each child's verdict, hold the best kept child."""
        attempts: list[Attempt] = []
        for p in prepared:
            if p.refusal is not None:
                attempts.append(Attempt(p.child, None, None, None, self._policy(p.refusal)))
                continue
            assert p.patched is not None
            retest = self.retests.pop(id(p), None) or self._verified(r, c, p, results[id(p)])
            self.verifications.append(Verification.of(retest.evidence, c.task.id))
            d = self._policy(decide(c.verdict, retest, p.size_problem, self.keep, c.task.checks))
            attempts.append(Attempt(p.child, p.patched, p.size, retest, d))
            self.steps.append(Step.of(c.task.id, r, retest.evidence, kept=d.decision is Decision.KEEP))
        if not attempts:
            return self._hold(r, c, proposal, obs, attempts, None, None)
        i = best([(a.decision, a.retest) for a in attempts])
        return self._hold(r, c, proposal, obs, attempts, attempts[i], attempts[i].decision)

    def _hold(
        self,
        r: int,
        c: CaseState,
        proposal: Proposal,
        obs: tuple[Observation, ...],
        attempts: list[Attempt],
        chosen: Attempt | None,
        decision: DecisionRecord | None,
    ) -> float:
        """Step 6: hold the chosen child if it is kept, record the decision, stop the case if asked."""
        held, held_verdict = c.candidate, c.verdict
        if decision is None:
            if proposal.idle:
                decision = DecisionRecord(Decision.INVESTIGATE, "nothing proposed: the case holds", "idle")
            else:
                why = proposal.failure or "strategy gave no patch"
                decision = DecisionRecord(Decision.INVESTIGATE, f"reflection unusable: {why}", "reflection")
        self._grow(r, c, [chosen] if proposal.sequence else attempts)
        risk = 0.0
        if (
            decision.decision is Decision.KEEP
            and chosen is not None
            and chosen.patched is not None
            and chosen.retest is not None
        ):
            c.candidate, c.verdict = chosen.patched, chosen.retest
            c.state = chosen.child.name or chosen.patched.label or f"round-{r}"
            risk = float(
                sum(a.size.lines for a in attempts if a.size is not None and a.decision.decision is Decision.KEEP)
            )
        else:
            self.steps.append(Step.of(c.task.id, r, c.verdict.evidence))
        cause = proposal.record.hypothesis.cause if proposal.record else ""
        unrun = self.unexecuted.pop(c.task.id, ())
        if decision.decision is Decision.ROLL_BACK and cause:
            c.rejected.append(cause)
        rnd = Round(
            index=r,
            candidate=held,
            verdict=held_verdict,
            reflection=proposal,
            observations=obs,
            patched=chosen.patched if chosen else None,
            patch_size=chosen.size if chosen else None,
            retest=chosen.retest if chosen else None,
            decision=decision,
            usage=self.rec.usage,
            case=c.task.id,
            attempts=tuple(attempts),
            state=c.state,
        )
        c.rounds.append(rnd)
        c.done = r
        self.rec.log(
            c.task,
            r,
            Role.DECISION,
            Kind.DECIDE,
            outputs=candidate_json(c.candidate),
            detail={
                **detail_of(decision),
                "candidate": c.candidate.digest,
                "proposal": c.state,
                "offered": chosen.child.name if chosen else "",
                "cause": cause,
                "lines": risk,
                "cost_so_far": self.rec.usage.cost_units,
                **({"frontier": len(c.frontier.waiting)} if c.frontier is not None else {}),
                **({"unexecuted": list(unrun)} if unrun else {}),
                "children": [{"name": a.child.name, **detail_of(a.decision)} for a in attempts],
            },
        )
        if decision.decision is Decision.STOP:
            self._case_stop(
                c, r, StopRecord(decision.decision, decision.reason, decision.rule, Stop.ESCALATE, c.task.id)
            )
        return risk

    def _grow(self, r: int, c: CaseState, attempts: Sequence[Attempt | None]) -> None:
        """Every kept child: a green one is a candidate for the winner; with a frontier, the
        others wait to be expanded (unless queued before or at the depth limit)."""
        for a in attempts:
            if a is None or a.decision.decision is not Decision.KEEP or a.patched is None or a.retest is None:
                continue
            name = a.child.name or a.patched.label or f"round-{r}"
            node = Node(
                candidate=a.patched,
                verdict=a.retest,
                state=name,
                depth=c.depth + 1,
                order=len(c.green),
                path=(*c.path, name),
            )
            if a.retest.resolved:
                c.green.append(node)
            elif c.frontier is not None:
                c.frontier.push(node)

    # -- a failed step, classified and obeyed (labkit.loop.engine.failure_policy) -----------

    def _ask(self, r: int, c: CaseState, situation: Situation) -> tuple[Proposal, tuple[Observation, ...]] | None:
        """Step 3. With `failures`, a failed proposal is classified: its class ends this expansion
        (an empty proposal) or stops the case (None)."""
        once = partial(
            ask, self.rec, self.strategy, situation, c.task, self.max_experiments, payment=self.prices.propose
        )
        if self.failures is None:
            return once()
        try:
            return self._retried(partial(once, model_errors="raise"), str(self.prices.propose.kind), r, c, "model")
        except BudgetExhausted:
            raise
        except Exception as exc:  # noqa: BLE001 - classified, recorded, obeyed
            ob = self._failed(r, c, exc, "propose", "")
            if ob.action != "continue":
                self._halt(r, c, ob)
                return None
            return Proposal(failure=f"{ob.error.error_class.value}: {exc}"), ()

    def _prepare(self, r: int, c: CaseState, child: Child, payment: Payment | None) -> Prepared | Obeyed:
        """Step 4 (and the run's `build`). With `failures`, a failure is classified: its class
        ends this child (a refusal) or stops the case (the Obeyed is returned)."""
        once = partial(prepare, self.rec, c.task, r, c.candidate, child, payment=payment, build=self.build)
        if self.failures is None:
            return once()
        try:
            p = self._retried(once, str(Kind.EXECUTE), r, c, "candidate")
            if p.refusal is None or p.refusal.rule not in _REFUSED:
                return p
            raise _REFUSED[p.refusal.rule](p.refusal.reason)  # a refusal is a failure to classify too
        except BudgetExhausted:
            raise
        except Exception as exc:  # noqa: BLE001 - classified, recorded, obeyed
            ob = self._failed(r, c, exc, "execute", child.name or child.source)
            if ob.action != "continue":
                return ob
            why = f"execute failed ({ob.error.error_class.value}): {type(exc).__name__}: {exc}"
            return Prepared(child, None, None, refusal=DecisionRecord(Decision.INVESTIGATE, why, "error-class"))

    def _verified(self, r: int, c: CaseState, p: Prepared, checked: Paid) -> Verdict:
        """Step 5's record: the child's verdict against the state it was proposed from."""
        assert p.patched is not None
        return self.rec.verified(c.task, r, p.patched, checked, c.verdict, f"proposal {p.child.name or r}")

    def _check(self, r: int, c: CaseState, p: Prepared) -> Paid:
        """Step 5 on a prepared child; with `failures`, INFRASTRUCTURE is retried (other
        failures of the validation itself interrupt the run, as without)."""
        assert p.patched is not None
        once = partial(self.rec.check, c.task, r, p.patched)
        return once() if self.failures is None else self._retried(once, str(Kind.VERIFY), r, c, "validator")

    def _retried(self, step: Callable[[], T], action: str, r: int, c: CaseState, source: str) -> T:
        assert self.failures is not None
        unit = self.rec.run_id if len(self.cases) == 1 else c.task.id  # a retry is never a new unit
        out, _ = retried(
            step,
            action,
            classify=self.failures.classify,
            policy=self.failures.retry,
            unit=unit,
            source=source,
            ledger=self.rec.ledger,
            run_id=self.rec.run_id,
            round=r,
        )
        return out

    def _failed(self, r: int, c: CaseState, exc: BaseException, where: str, child: str) -> Obeyed:
        assert self.failures is not None
        return self._obeyed(
            r, c, obey(self.failures, exc, "model" if where == "propose" else "candidate"), where, child
        )

    def _halt(self, r: int, c: CaseState, ob: Obeyed) -> None:
        """Stop a case its failure's class stopped (or quarantined)."""
        if c.stop is None:
            why = f"{ob.error.error_class.value}: {ob.error.reason} ({ob.words})"
            self._case_stop(c, r, StopRecord(Decision.STOP, why, ob.rule, Stop.ESCALATE, c.task.id))

    def _alarmed(self, r: int, c: CaseState, p: Prepared, verdict: Verdict) -> Obeyed:
        """An integrity alarm at validation: the class is POLICY_DENIED and the case is quarantined."""
        why = "integrity alarm: " + "; ".join(verdict.evidence.alarms)
        ob = Obeyed(Classified(ErrorClass.POLICY_DENIED, "validator", why, True), "quarantine")
        return self._obeyed(r, c, ob, "verify", p.child.name or p.child.source)

    def _obeyed(self, r: int, c: CaseState, ob: Obeyed, where: str, child: str) -> Obeyed:
        self.rec.log(
            c.task,
            r,
            Role.DECISION,
            Kind.ERROR_DECISION,
            detail={
                "where": where,
                "error_class": ob.error.error_class.value,
                "reason": ob.error.reason,
                "action": ob.action,
                "candidate": c.candidate.digest,
                "child": child,
            },
        )
        return ob

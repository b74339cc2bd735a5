"""Frontier search under a budget: seed 002 §3's control flow, as a strategy-driven loop.

The generator is an ordinary `labkit.loop.strategy.Strategy`: `propose(situation)`
returns a Proposal whose children are the candidate changes (one shared generation may
propose several routes). The host (this module) owns everything else — budget, isolation,
records — and the strategy cannot touch it:

    frontier = [root]; visited = {}
    while frontier and expansions < max_expansions and stalled < max_stalled:
        state = frontier.pop(); skip if visited or too deep; expansions += 1
        proposal = paid("generate", propose(situation))     # empty still costs
        for child in proposal.children[:max_children]:      # the host truncates
            candidate = paid("execute", run_in_fresh_branch(child))
            verdict = paid("verify", development_checks(candidate))
            record(child, ΔF with severity); integrity alarm -> quarantine, stop
            all required pass -> seal;  comparable progress -> frontier
    winner = preregistered rule over sealed; confirm it from the reserve on the sealed set

Every paid action is an `Operation` (a deferred description): nothing is spent while
building it. Failures are classified (labkit.loop.classify) and the class decides what
happens: INFRASTRUCTURE is retried by the one billed rule, INVALID_ARGUMENT and
TEST_FAILURE end that branch, POLICY_DENIED stops, UNKNOWN_EFFECT (and any integrity
alarm) quarantines and stops "incomplete". Every step is a ledger event of role "search"
carrying the task's `unit`: branches and retries are never new experimental units.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from labkit.core.error_classes import Action, ErrorClass, RetryPolicy, permits
from labkit.core.errors import BudgetExhausted, IntegrityAlarm, SearchHalted
from labkit.core.types import Candidate, Usage, Verdict
from labkit.grading.checkset import CheckRun, CheckSet, compare
from labkit.loop.classify import Source, classify, retry_infrastructure
from labkit.loop.frontier import (
    Branch,
    Costs,
    Expansion,
    Sealed,
    SearchError,
    SearchLimits,
    SearchResult,
    State,
    WinnerRule,
    smallest_change,
)
from labkit.loop.progress import judge
from labkit.loop.strategy import Child, Proposal, Situation, Strategy
from labkit.record.budget import Budget, Operation

if TYPE_CHECKING:
    from labkit.record.ledger import Ledger

__all__ = ["Host", "run_search"]

_LIMITS = SearchLimits()
_RETRY = RetryPolicy()


@dataclass(frozen=True)
class Host:
    """The paid actions besides generation. Each must be safe to run in a fresh branch."""

    execute: Callable[[Candidate, Child, int], Candidate]  # (parent, child, round): fresh branch
    verify: Callable[[Candidate, int], Verdict]  # development checks (diagnostics come back)
    confirm: Callable[[Candidate], bool]  # the sealed final check set: pass/fail only
    checks: CheckSet  # the dev checks ΔF is computed on (versions, severities)
    environment: str
    validator: str = ""
    suite: str = ""


@dataclass
class _Run:
    host: Host
    budget: Budget
    costs: Costs
    ledger: Ledger | None
    run_id: str
    unit: str
    retry: RetryPolicy
    branches: list[Branch] = field(default_factory=list)

    def log(self, kind: str, rnd: int, **detail: Any) -> None:
        """A search event. Spend goes in detail["spent"]: the usage columns stay with the
        budget's own events, so summing a run's usage never counts a charge twice."""
        if self.ledger is not None:
            self.ledger.record(self.run_id, rnd, "search", kind, ended_at=time.time(),
                               detail={"unit": self.unit, **detail})  # fmt: skip

    def paid(self, kind: str, fn: Callable[..., Any], *args: Any, rnd: int, source: Source) -> Any:
        cost = getattr(self.costs, kind)
        op = Operation(fn, args, upper=Usage(cost_units=cost), measure=lambda _: Usage(cost_units=cost))
        out, _ = retry_infrastructure(self.budget, kind, op, policy=self.retry, unit=self.unit,
                                      source=source, ledger=self.ledger, run_id=self.run_id,
                                      round=rnd)  # fmt: skip
        return out

    def decide_error(self, exc: Exception, source: Source, rnd: int, where: str) -> str:
        """Classify a failed action and obey its class; returns the class name (branch ends)."""
        if isinstance(exc, BudgetExhausted):
            raise exc
        cls = classify(exc, source)
        assert cls is not None
        if cls.error_class is ErrorClass.UNKNOWN_EFFECT or isinstance(exc, IntegrityAlarm):
            self.log("decision", rnd, where=where, error_class=cls.error_class.value,
                     reason=cls.reason, action="quarantine")  # fmt: skip
            raise SearchHalted(cls.reason, cls.error_class.value, quarantine=True) from exc
        if not permits(cls.error_class, Action.NEW_HYPOTHESIS) and not permits(
            cls.error_class, Action.FIX_ARGUMENTS
        ):  # POLICY_DENIED (and INFRASTRUCTURE whose retries ran out): only stop is left
            self.log("decision", rnd, where=where, error_class=cls.error_class.value,
                     reason=cls.reason, action="stop")  # fmt: skip
            raise SearchHalted(cls.reason, cls.error_class.value, quarantine=False) from exc
        self.log("decision", rnd, where=where, error_class=cls.error_class.value, reason=cls.reason,
                 action="end this branch; other hypotheses continue")  # fmt: skip
        return cls.error_class.value


def run_search(
    start: Candidate,
    baseline: Verdict,
    strategy: Strategy,
    host: Host,
    budget: Budget,
    costs: Costs,
    *,
    limits: SearchLimits = _LIMITS,
    rule: WinnerRule = smallest_change,
    ledger: Ledger | None = None,
    run_id: str = "search",
    unit: str = "",
    retry: RetryPolicy = _RETRY,
    case: str = "",
) -> SearchResult:
    """Search from `start` (whose dev verdict `baseline` is the task's input) and confirm.

    `budget.confirmation` should hold `costs.confirm`: without that reserve, or when the
    confirmation fails, the task ends "incomplete" even with sealed candidates.
    """
    if not isinstance(rule, WinnerRule):
        raise SearchError(f"rule must be a WinnerRule registered up front, got {type(rule).__name__}")
    run = _Run(host, budget, costs, ledger, run_id, unit or run_id, retry)
    base_run = host.checks.read(baseline.evidence)
    # Registered before any candidate is seen: the rule, limits, costs and reserve.
    run.log("define", 0, rule=rule.name, limits=vars(limits), costs=costs.as_dict(),
            checks=host.checks.name, environment=host.environment, strategy=strategy.name,
            simulated=strategy.simulated, reserve=budget.confirmation.cost_units,
            limit=budget.limit.cost_units if math.isfinite(budget.limit.cost_units) else None,
            baseline_failures=list(base_run.failures))  # fmt: skip
    root = State(start, host.environment, "", 0)
    frontier: deque[tuple[State, Verdict, CheckRun]] = deque([(root, baseline, base_run)])
    visited: set[str] = set()
    sealed: list[Sealed] = []
    expansions: list[Expansion] = []
    stalled = 0
    reason = "frontier_empty"
    try:
        while frontier and len(expansions) < limits.max_expansions and stalled < limits.max_stalled:
            state, verdict, checks = frontier.popleft()
            if state.key in visited or state.depth >= limits.max_depth:
                continue
            visited.add(state.key)
            n = len(expansions) + 1
            children, exp = _generate(run, strategy, state, verdict, n, limits, case)
            expansions.append(exp)
            progressed = False
            for child in children:
                pushed = _branch(run, state, checks, child, n, visited, sealed, limits)
                if pushed is not None:
                    frontier.append(pushed)
                    progressed = True
            stalled = 0 if progressed else stalled + 1
        reason = ("frontier_empty" if not frontier else "max_expansions"
                  if len(expansions) >= limits.max_expansions else "stalled")  # fmt: skip
    except BudgetExhausted as exc:
        reason = "budget_exhausted"
        run.log("decision", len(expansions), where="budget", error_class=ErrorClass.POLICY_DENIED.value,
                reason=str(exc), action="stop")  # fmt: skip
    except SearchHalted as exc:  # classified and recorded: the class left quarantine or stop
        if exc.quarantine:
            run.log("quarantine", len(expansions), reason=str(exc))
            return _finish(run, "incomplete", "integrity_or_effect_unresolved", rule, None, None,
                           sealed, expansions, baseline, base_run)  # fmt: skip
        reason = ("policy_denied" if exc.error_class == ErrorClass.POLICY_DENIED.value
                  else f"stopped: {exc.error_class}")  # fmt: skip
    if not sealed:
        return _finish(run, "incomplete", reason, rule, None, None, sealed, expansions, baseline, base_run)
    winner = min(sealed, key=lambda s: rule.key(s, start))
    confirmed = _confirm(run, winner, len(expansions))
    status = "success" if confirmed else "incomplete"
    why = reason if confirmed else ("confirmation_unfunded" if confirmed is None else "confirmation_failed")
    return _finish(run, status, why, rule, winner, confirmed, sealed, expansions, baseline, base_run)


def _generate(
    run: _Run, strategy: Strategy, state: State, verdict: Verdict, n: int,
    limits: SearchLimits, case: str,
) -> tuple[tuple[Child, ...], Expansion]:  # fmt: skip
    situation = Situation(n, state.candidate, verdict, case=case, state=state.hypothesis or "start")
    before = run.budget.spent.cost_units
    try:
        proposal: Proposal = run.paid("generate", strategy.propose, situation, rnd=n, source="model")
        failure = proposal.failure
        proposed = proposal.children
    except BudgetExhausted:
        raise
    except Exception as exc:  # noqa: BLE001 - classified, obeyed, recorded
        failure = f"{run.decide_error(exc, 'model', n, 'generate')}: {exc}"
        proposed = ()
    kept = proposed[: limits.max_children]
    exp = Expansion(n, state.key, state.hypothesis, state.depth, len(proposed), len(kept),
                    run.budget.spent.cost_units - before, failure)  # fmt: skip
    run.log("expand", n, spent=exp.generate_spent, state=state.key,
            hypothesis=state.hypothesis, depth=state.depth, proposed=len(proposed),
            kept=len(kept), truncated=len(proposed) - len(kept), failure=failure,
            children=[c.name or c.source for c in kept])  # fmt: skip
    return kept, exp


def _branch(
    run: _Run, parent: State, parent_run: CheckRun, child: Child, n: int,
    visited: set[str], sealed: list[Sealed], limits: SearchLimits,
) -> tuple[State, Verdict, CheckRun] | None:  # fmt: skip
    name = child.name or child.source or "child"
    before = run.budget.spent.cost_units

    def record(outcome: str, why: str, **extra: Any) -> None:
        b = Branch(n, name, parent.key, extra.pop("state", ""), parent.depth + 1,
                   extra.pop("candidate", ""), outcome, why, run.budget.spent.cost_units - before,
                   **extra)  # fmt: skip
        run.branches.append(b)
        run.log("branch", n, spent=b.spent, name=name, parent=parent.key, state=b.state,
                depth=b.depth, candidate=b.candidate, outcome=outcome, reason=why,
                progress=b.progress, error_class=b.error_class, resolved=b.resolved)  # fmt: skip

    try:
        candidate: Candidate = run.paid("execute", run.host.execute, parent.candidate, child, n,
                                        rnd=n, source="candidate")  # fmt: skip
    except BudgetExhausted:
        record("not run", "budget exhausted before execution")
        raise
    except Exception as exc:  # noqa: BLE001 - classified, recorded, then obeyed
        cls = classify(exc, "candidate")
        halt = isinstance(exc, IntegrityAlarm) or (
            cls is not None and cls.error_class is ErrorClass.UNKNOWN_EFFECT)  # fmt: skip
        record("quarantined" if halt else "execute failed", f"{type(exc).__name__}: {exc}",
               error_class=cls.error_class.value if cls else "")  # fmt: skip
        run.decide_error(exc, "candidate", n, "execute")
        return None
    hyp = f"{parent.hypothesis} > {name}" if parent.hypothesis else name
    state = State(candidate, run.host.environment, hyp, parent.depth + 1, parent.key)
    try:
        verdict: Verdict = run.paid("verify", run.host.verify, candidate, n, rnd=n, source="validator")
    except BudgetExhausted:
        record("not run", "budget exhausted before verification", state=state.key,
               candidate=candidate.digest)  # fmt: skip
        raise
    progress = judge(compare(parent_run, run.host.checks.read(verdict.evidence)))
    ids = {"state": state.key, "candidate": candidate.digest, "progress": progress.as_dict(),
           "resolved": verdict.resolved}  # fmt: skip
    if verdict.quarantined:
        record("quarantined", "; ".join(verdict.evidence.alarms), error_class="POLICY_DENIED", **ids)
        run.log("decision", n, where="verify", error_class=ErrorClass.POLICY_DENIED.value,
                reason="integrity alarm: " + "; ".join(verdict.evidence.alarms), action="quarantine")  # fmt: skip
        raise SearchHalted("integrity alarm: " + "; ".join(verdict.evidence.alarms),
                           ErrorClass.POLICY_DENIED.value, quarantine=True)  # fmt: skip
    if verdict.resolved:
        seal = Sealed(len(sealed), state, name, verdict.evidence.digest, verdict.evidence.suite,
                      verdict.evidence.validator)  # fmt: skip
        sealed.append(seal)
        record("sealed", "all required checks pass", **ids)
        run.log("seal", n, name=name, state=state.key, candidate=candidate.digest,
                evidence=seal.evidence, seal=seal.digest)  # fmt: skip
        return None
    cls = classify(verdict)
    err = cls.error_class.value if cls else ""
    if not progress.comparable:
        record("not expanded", progress.reason, error_class=err, **ids)
        return None
    if state.key in visited or state.depth >= limits.max_depth:
        record("not expanded", "state already visited or at max depth", error_class=err, **ids)
        return None
    record("frontier", f"not verified; {progress.reason}", error_class=err, **ids)
    return state, verdict, run.host.checks.read(verdict.evidence)


def _confirm(run: _Run, winner: Sealed, rnd: int) -> bool | None:
    """The sealed final check set, paid from the confirmation reserve. None: not funded."""
    try:
        ok = bool(run.budget.paid(
            "confirm",
            Operation(run.host.confirm, (winner.candidate,), upper=Usage(cost_units=run.costs.confirm),
                      measure=lambda _: Usage(cost_units=run.costs.confirm)),
            for_confirmation=True, round=rnd,
        ))  # fmt: skip
    except BudgetExhausted as exc:
        run.log("confirm", rnd, seal=winner.digest, confirmed=None, reason=str(exc))
        return None
    run.log("confirm", rnd, spent=run.costs.confirm, seal=winner.digest, confirmed=ok)
    return ok


def _finish(
    run: _Run, status: str, reason: str, rule: WinnerRule, winner: Sealed | None,
    confirmed: bool | None, sealed: list[Sealed], expansions: list[Expansion],
    baseline: Verdict, base_run: CheckRun,
) -> SearchResult:  # fmt: skip
    run.log("stop", len(expansions), status=status, reason=reason,
            winner=winner.route if winner else "", seal=winner.digest if winner else "",
            confirmed=confirmed, sealed=[s.route for s in sealed])  # fmt: skip
    return SearchResult(run.run_id, "success" if status == "success" else "incomplete", reason,
                        rule.name, winner, confirmed, tuple(sealed), tuple(expansions),
                        tuple(run.branches), baseline, base_run)  # fmt: skip

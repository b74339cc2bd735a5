"""Frontier search under a budget: seed 002 §3's control flow, on the engine's steps.

The generator is an ordinary `labkit.loop.engine.strategy.Strategy`: `propose(situation)`
returns a Proposal whose children are the candidate changes (one shared generation may
propose several routes). The host (this module) owns everything else — budget, isolation,
records — and the strategy cannot touch it:

    frontier = [root]; visited = {}
    while frontier and expansions < max_expansions and stalled < max_stalled:
        state = frontier.pop(); skip if visited or too deep; expansions += 1
        proposal = steps.propose(..., payment=generate)     # empty still costs
        for child in proposal.children[:max_children]:      # the host truncates
            candidate = steps.prepare(..., payment=execute) # run in a fresh branch
            verdict = paid(verify, development_checks(candidate))
            record(child, ΔF with severity); integrity alarm -> quarantine, stop
            all required pass -> seal;  decide(keep="severity") keeps -> frontier
    winner = preregistered rule over sealed; Recorder.confirm from the reserve: pass/fail

Every paid action goes through the engine's `Recorder` with a `steps.Payment` at the
declared cost: nothing is spent while building it (the budget reserves before the step
runs). Generation is the engine's step 3 (`steps.propose`, billed as GENERATE; a model
error comes back to be classified); execution is the engine's step 4 (`steps.prepare`,
paid as EXECUTE) unless the host brings its own `execute`; the keep decision is the
engine's `decide(keep="severity")`; confirmation is `Recorder.confirm` (pass/fail only)
unless the host brings its own `confirm`. Failures are classified (labkit.loop.control.classify)
and the class decides what happens: INFRASTRUCTURE is retried by the one billed rule,
INVALID_ARGUMENT and TEST_FAILURE end that branch, POLICY_DENIED stops, UNKNOWN_EFFECT
(and any integrity alarm) quarantines and stops "incomplete". Every step is a ledger
event of role SEARCH (kinds in labkit.record.events) carrying the task's `unit`: branches
and retries are never new experimental units.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

from labkit.core.error_classes import Action, ErrorClass, RetryPolicy, permits
from labkit.core.errors import (
    BudgetExhausted,
    IntegrityAlarm,
    PatchError,
    SearchHalted,
)
from labkit.core.types import Candidate, Decision, Verdict
from labkit.grading.checkset import CheckRun, CheckSet, compare
from labkit.grading.verdicts import Checker
from labkit.loop.control.classify import Source, classify, retried
from labkit.loop.engine.decide import decide
from labkit.loop.engine.progress import judge
from labkit.loop.engine.steps import Payment, Recorder, prepare
from labkit.loop.engine.steps import propose as ask
from labkit.loop.engine.strategy import Child, Situation, Strategy
from labkit.loop.engine.trace import Task
from labkit.loop.search.frontier import (
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
from labkit.record.budget import Budget
from labkit.record.events import Kind, Role
from labkit.record.ledger import Ledger

__all__ = ["Host", "run_search"]

T = TypeVar("T")

_LIMITS = SearchLimits()
_RETRY = RetryPolicy()


@dataclass(frozen=True)
class Host:
    """The case side of a search. Each action must be safe to run in a fresh branch.

    An engine-backed host (`labkit.loop.search.search_case.engine_host`) gives `task` and
    `recorder` and leaves `execute` / `confirm` None: execution is then the engine's step 4
    (`steps.prepare`, then `build`), confirmation `Recorder.confirm` on the task's hidden
    suite. A host may bring its own `execute` / `confirm` (a simulated world, a stricter
    final set); the search pays them at the declared costs all the same."""

    execute: Callable[[Candidate, Child, int], Candidate] | None  # (parent, child, round): fresh branch
    verify: Callable[[Candidate, int], Verdict]  # development checks (diagnostics come back)
    confirm: Callable[[Candidate], bool] | None  # the sealed final check set: pass/fail only
    checks: CheckSet  # the dev checks ΔF is computed on (versions, severities)
    environment: str
    validator: str = ""
    suite: str = ""
    task: Task | None = None  # the case as the engine sees it (hidden = the sealed final set)
    recorder: Recorder | None = None  # the engine's recorder for the case (its checker)
    build: Callable[[Candidate], object] | None = None  # run on each executed candidate (step 4)


@dataclass
class _Run:
    host: Host
    budget: Budget
    costs: Costs
    ledger: Ledger
    run_id: str
    unit: str
    retry: RetryPolicy
    rec: Recorder
    branches: list[Branch] = field(default_factory=list)

    def log(self, kind: Kind, rnd: int, **detail: Any) -> None:
        """A search event. Spend goes in detail["spent"]: the usage columns stay with the
        budget's own events, so summing a run's usage never counts a charge twice."""
        detail = {"unit": self.unit, **detail}  # the ledger refuses a field its vocabulary does not declare
        self.ledger.record(self.run_id, rnd, Role.SEARCH, kind, ended_at=time.time(), detail=detail)

    def attempt(self, kind: Kind, fn: Callable[[], T], rnd: int, source: Source) -> T:
        """One paid step (`fn` pays through the engine's Recorder) under the one retry rule."""
        out, _ = retried(fn, str(kind), policy=self.retry, unit=self.unit, source=source,
                         ledger=self.ledger, run_id=self.run_id, round=rnd)  # fmt: skip
        return out

    def price(self, kind: Kind) -> Payment:
        return Payment.fixed(kind, float(getattr(self.costs, str(kind))))

    def decide_error(self, exc: Exception, source: Source, rnd: int, where: str) -> str:
        """Classify a failed action and obey its class; returns the class name (branch ends)."""
        if isinstance(exc, BudgetExhausted):
            raise exc
        cls = classify(exc, source)
        assert cls is not None
        if cls.error_class is ErrorClass.UNKNOWN_EFFECT or isinstance(exc, IntegrityAlarm):
            self.log(Kind.ERROR_DECISION, rnd, where=where, error_class=cls.error_class.value,
                     reason=cls.reason, action="quarantine")  # fmt: skip
            raise SearchHalted(cls.reason, cls.error_class.value, quarantine=True) from exc
        if not permits(cls.error_class, Action.NEW_HYPOTHESIS) and not permits(
            cls.error_class, Action.FIX_ARGUMENTS
        ):  # POLICY_DENIED (and INFRASTRUCTURE whose retries ran out): only stop is left
            self.log(Kind.ERROR_DECISION, rnd, where=where, error_class=cls.error_class.value,
                     reason=cls.reason, action="stop")  # fmt: skip
            raise SearchHalted(cls.reason, cls.error_class.value, quarantine=False) from exc
        self.log(Kind.ERROR_DECISION, rnd, where=where, error_class=cls.error_class.value, reason=cls.reason,
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
    ledger = ledger if ledger is not None else Ledger()
    checker = host.recorder.checker if host.recorder is not None else Checker()
    rec = Recorder(run_id, ledger, checker, budget, costs.verify, strategy.simulated)
    run = _Run(host, budget, costs, ledger, run_id, unit or run_id, retry, rec)
    base_run = host.checks.read(baseline.evidence)
    # Registered before any candidate is seen: the rule, limits, costs and reserve.
    run.log(Kind.DEFINE, 0, rule=rule.name, limits=vars(limits), costs=costs.as_dict(),
            checks=host.checks.name, environment=host.environment, strategy=strategy.name,
            simulated=strategy.simulated, reserve=budget.confirmation.cost_units,
            limit=budget.limit.cost_units if math.isfinite(budget.limit.cost_units) else None,
            baseline_failures=list(base_run.failures))  # fmt: skip
    root = State(start, host.environment, "", 0)
    frontier: deque[tuple[State, Verdict]] = deque([(root, baseline)])
    visited: set[str] = set()
    sealed: list[Sealed] = []
    expansions: list[Expansion] = []
    stalled = 0
    reason = "frontier_empty"
    try:
        while frontier and len(expansions) < limits.max_expansions and stalled < limits.max_stalled:
            state, verdict = frontier.popleft()
            if state.key in visited or state.depth >= limits.max_depth:
                continue
            visited.add(state.key)
            n = len(expansions) + 1
            children, exp = _generate(run, strategy, state, verdict, n, limits, case)
            expansions.append(exp)
            progressed = False
            for child in children:
                pushed = _branch(run, state, verdict, child, n, visited, sealed, limits)
                if pushed is not None:
                    frontier.append(pushed)
                    progressed = True
            stalled = 0 if progressed else stalled + 1
        reason = ("frontier_empty" if not frontier else "max_expansions"
                  if len(expansions) >= limits.max_expansions else "stalled")  # fmt: skip
    except BudgetExhausted as exc:  # the budget ran out: a stop, not a policy refusal (no class)
        reason = "budget_exhausted"
        run.log(Kind.ERROR_DECISION, len(expansions), where="budget", error_class="",
                reason=str(exc), action="stop")  # fmt: skip
    except SearchHalted as exc:  # classified and recorded: the class left quarantine or stop
        if exc.quarantine:
            run.log(Kind.QUARANTINE, len(expansions), reason=str(exc))
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
    pay = run.price(Kind.GENERATE)  # the declared cost of one shared generation, not REFLECT's cap
    try:
        proposal, _ = run.attempt(Kind.GENERATE, partial(ask, run.rec, strategy, situation, run.host.task, 0,
                                                         payment=pay, model_errors="raise"), n, "model")  # fmt: skip
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
    run.log(Kind.EXPAND, n, spent=exp.generate_spent, state=state.key,
            hypothesis=state.hypothesis, depth=state.depth, proposed=len(proposed),
            kept=len(kept), truncated=len(proposed) - len(kept), failure=failure,
            children=[c.name or c.source for c in kept])  # fmt: skip
    return kept, exp


def _execute(run: _Run, parent: Candidate, child: Child, n: int) -> Candidate:
    """Run `child` in a fresh branch of `parent`, paid as EXECUTE: the engine's step 4
    (protected paths refused as an integrity alarm, apply, `build`) or the host's own."""
    pay, host = run.price(Kind.EXECUTE), run.host
    if host.execute is not None:
        return run.rec.pay(pay, partial(host.execute, parent, child, n), n)
    if host.task is None:
        raise SearchError("a Host without its own execute needs the engine's task (Host.task)")
    prep = prepare(run.rec, host.task, n, parent, child, payment=pay, build=host.build)
    if prep.refusal is not None:
        if prep.refusal.rule == "integrity":
            raise IntegrityAlarm([prep.refusal.reason], candidate=child.name)
        raise PatchError(prep.refusal.reason)  # it changes nothing, or does not apply
    assert prep.patched is not None
    return prep.patched


def _branch(
    run: _Run, parent: State, parent_verdict: Verdict, child: Child, n: int,
    visited: set[str], sealed: list[Sealed], limits: SearchLimits,
) -> tuple[State, Verdict] | None:  # fmt: skip
    name = child.name or child.source or "child"
    parent_run = run.host.checks.read(parent_verdict.evidence)
    before = run.budget.spent.cost_units

    def record(outcome: str, why: str, **extra: Any) -> None:
        b = Branch(n, name, parent.key, extra.pop("state", ""), parent.depth + 1,
                   extra.pop("candidate", ""), outcome, why, run.budget.spent.cost_units - before,
                   **extra)  # fmt: skip
        run.branches.append(b)
        run.log(Kind.BRANCH, n, spent=b.spent, name=name, parent=parent.key, state=b.state,
                depth=b.depth, candidate=b.candidate, outcome=outcome, reason=why,
                progress=b.progress, error_class=b.error_class, resolved=b.resolved)  # fmt: skip

    # Execute only what the budget can also verify: paying to run a route it then cannot check
    # buys nothing. (The declared costs are fixed, so this is known before anything runs.)
    need, left = run.costs.execute + run.costs.verify, run.budget.available.cost_units
    if need > left + 1e-9:
        record("not run", f"execute + verify cost {need:g} but {left:g} left: not executed")
        raise BudgetExhausted(f"branch {name!r}: execute + verify cost {need:g} cost units, {left:g} left")
    try:
        candidate = run.attempt(Kind.EXECUTE, partial(_execute, run, parent.candidate, child, n), n, "candidate")
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
        verify = partial(run.rec.pay, run.price(Kind.VERIFY), partial(run.host.verify, candidate, n), n)
        verdict: Verdict = run.attempt(Kind.VERIFY, verify, n, "validator")
    except BudgetExhausted:
        record("not run", "budget exhausted before verification", state=state.key,
               candidate=candidate.digest)  # fmt: skip
        raise
    progress = judge(compare(parent_run, run.host.checks.read(verdict.evidence)))
    ids = {"state": state.key, "candidate": candidate.digest, "progress": progress.as_dict(),
           "resolved": verdict.resolved}  # fmt: skip
    if verdict.quarantined:
        record("quarantined", "; ".join(verdict.evidence.alarms), error_class="POLICY_DENIED", **ids)
        run.log(Kind.ERROR_DECISION, n, where="verify", error_class=ErrorClass.POLICY_DENIED.value,
                reason="integrity alarm: " + "; ".join(verdict.evidence.alarms), action="quarantine")  # fmt: skip
        raise SearchHalted("integrity alarm: " + "; ".join(verdict.evidence.alarms),
                           ErrorClass.POLICY_DENIED.value, quarantine=True)  # fmt: skip
    if verdict.resolved:
        seal = Sealed(len(sealed), state, name, verdict.evidence.digest, verdict.evidence.suite,
                      verdict.evidence.validator)  # fmt: skip
        sealed.append(seal)
        record("sealed", "all required checks pass", **ids)
        run.log(Kind.SEAL, n, name=name, state=state.key, candidate=candidate.digest,
                evidence=seal.evidence, seal=seal.digest)  # fmt: skip
        return None
    cls = classify(verdict)
    err = cls.error_class.value if cls else ""
    # The engine's step 6 with severity: ΔF counts only if nothing was skipped, no check
    # changed version, no new severe failure, no light fixes mask a severe one.
    kept = decide(parent_verdict, verdict, keep="severity", checks=run.host.checks)
    if kept.decision is Decision.STOP:  # judged on another suite or validator: integrity
        record("quarantined", kept.reason, error_class=ErrorClass.POLICY_DENIED.value, **ids)
        run.log(Kind.ERROR_DECISION, n, where="verify", error_class=ErrorClass.POLICY_DENIED.value,
                reason=kept.reason, action="quarantine")  # fmt: skip
        raise SearchHalted(kept.reason, ErrorClass.POLICY_DENIED.value, quarantine=True)
    if kept.decision is not Decision.KEEP:
        record("not expanded", kept.reason, error_class=err, **ids)
        return None
    if state.key in visited or state.depth >= limits.max_depth:
        record("not expanded", "state already visited or at max depth", error_class=err, **ids)
        return None
    record("frontier", f"not verified; {kept.reason}", error_class=err, **ids)
    return state, verdict


def _confirm(run: _Run, winner: Sealed, rnd: int) -> bool | None:
    """The sealed final check set, paid from the confirmation reserve. None: not funded."""
    pay, host = run.price(Kind.CONFIRM), run.host
    try:
        if host.confirm is not None:
            ok = bool(run.rec.pay(pay, partial(host.confirm, winner.candidate), rnd, for_confirmation=True))
        elif host.task is not None:
            ok = run.rec.confirm(host.task, rnd, winner.candidate, payment=pay)
        else:
            raise SearchError("a Host without its own confirm needs the engine's task (Host.task)")
    except BudgetExhausted as exc:
        run.log(Kind.CONFIRM, rnd, seal=winner.digest, confirmed=None, reason=str(exc))
        return None
    run.log(Kind.CONFIRM, rnd, spent=run.costs.confirm, seal=winner.digest, confirmed=ok)
    return ok


def _finish(
    run: _Run, status: str, reason: str, rule: WinnerRule, winner: Sealed | None,
    confirmed: bool | None, sealed: list[Sealed], expansions: list[Expansion],
    baseline: Verdict, base_run: CheckRun,
) -> SearchResult:  # fmt: skip
    run.log(Kind.STOP, len(expansions), status=status, reason=reason,
            winner=winner.route if winner else "", seal=winner.digest if winner else "",
            confirmed=confirmed, sealed=[s.route for s in sealed])  # fmt: skip
    return SearchResult(run.run_id, "success" if status == "success" else "incomplete", reason,
                        rule.name, winner, confirmed, tuple(sealed), tuple(expansions),
                        tuple(run.branches), baseline, base_run)  # fmt: skip

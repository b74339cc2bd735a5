"""The engine: six strictly ordered steps, for one case or a suite of cases, one trace each.

    (1) protected acceptance is fixed before anything runs   -> suite digest in every event
    (2) run the candidate, collect external failure evidence  -> validator (one verdict cache)
    (3) compress evidence into a proposal                     -> a Strategy (may observe first)
    (4) apply each proposed change                            -> patch (size-capped)
    (5) re-run failing + protective tests, SAME validator     -> validator
    (6) keep / roll back / keep investigating / stop          -> decide + stop rules

Roles only see what they need: the validator gets a candidate and returns evidence, the
strategy gets *visible* evidence and a read-only candidate and returns children, the
decision only reads verdicts. A case's hidden tests score the held candidate after every
round (for accounting) and never reach a strategy. Cases run in lockstep rounds; after each
round per-case rules may stop a case and run rules (reading per-round counts rebuilt from
the ledger) may stop the run. Every ending records a stop with its reason.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from labkit.core import patch as patches
from labkit.core.errors import (
    BudgetExhausted,
    InvalidSetting,
    LedgerError,
    PatchError,
    RunInterrupted,
)
from labkit.core.types import Candidate, Decision, DecisionRecord, Patch, Verdict
from labkit.grading.verdicts import Checked, Checker, VerdictCache
from labkit.loop import accounting
from labkit.loop import resume as resuming
from labkit.loop.decide import KEEP_MODES, Keep, assess, best, decide
from labkit.loop.probe import Observation
from labkit.loop.steps import (
    Prepared,
    Recorder,
    candidate_from_json,
    candidate_json,
    detail_of,
    prepare,
    situation_for,
)
from labkit.loop.steps import propose as ask
from labkit.loop.stopping import History, Rule, Step, Stop, StopRecord, Verification, check
from labkit.loop.strategy import Proposal, Situation, Strategy
from labkit.loop.trace import Attempt, EngineRun, Round, Task, Trace
from labkit.record.events import Kind, Role

if TYPE_CHECKING:
    from labkit.grading.acceptance import AcceptanceSuite
    from labkit.grading.validator import Validator
    from labkit.record.budget import Budget
    from labkit.record.ledger import Ledger

__all__ = [
    "EngineRun", "Proposal", "Reflection", "Round", "Situation", "Task", "Trace", "assess",
    "candidate_from_json", "decide", "resume_point", "run", "run_loop", "run_sequence",
]  # fmt: skip

Reflection = Proposal  # the name the single-case loop used for a reflector's answer
resume_point = resuming.resume_point
_CAP_KEYS = frozenset(p for p in inspect.signature(patches.check_size).parameters if p != "patch")


@dataclass
class _Case:
    """One case's mutable state during a run."""

    task: Task
    candidate: Candidate
    verdict: Verdict
    state: str
    start: Candidate
    start_verdict: Verdict
    done: int = 0  # last decided round
    rejected: list[str] = field(default_factory=list)
    rounds: list[Round] = field(default_factory=list)
    stop: StopRecord | None = None
    scored: set[int] = field(default_factory=set)


def _as_strategy(obj: Any) -> Strategy:
    if hasattr(obj, "propose"):
        return obj
    if hasattr(obj, "reflect"):
        return _Reflecting(obj)
    raise TypeError(f"{type(obj).__name__} is not a Strategy: it has no propose(situation)")


@dataclass(frozen=True)
class _Reflecting:
    """A reflector (reflect(situation) -> Proposal) used as a strategy."""

    reflector: Any

    @property
    def name(self) -> str:
        return str(self.reflector.name)

    @property
    def simulated(self) -> bool:
        return bool(self.reflector.simulated)

    def propose(self, situation: Situation) -> Proposal:
        return self.reflector.reflect(situation)


def _checker(validator: Validator | Checker | None, cache: VerdictCache | None) -> Checker:
    if isinstance(validator, Checker):
        return validator
    return Checker(validator, cache)


def run(
    tasks: Sequence[Task],
    strategy: Strategy | Any,
    validator: Validator | Checker | None = None,
    *,
    rounds: int = 5,
    rules: Sequence[Rule] = (),
    case_rules: Sequence[Rule] = (),
    keep: Keep = "progress",
    stop_at_green: bool = True,
    observe: Literal["hidden", "visible"] = "hidden",
    recheck: int = 0,
    max_experiments: int = 2,
    ledger: Ledger | None = None,
    budget: Budget | None = None,
    cache: VerdictCache | None = None,
    run_id: str = "",
    validation_cost: float = 1.0,
    resume: bool = False,
    workers: int = 1,
) -> EngineRun:
    """Run every task through up to `rounds` rounds of the six steps; record everything.

    `keep` is the decide mode (see `labkit.loop.decide`). With `stop_at_green` a case stops
    once its visible suite passes; without it, passing cases are still offered to the
    strategy (how over-editing shows). `rules` read the whole run's history (per-round
    counts from the ledger: hidden scoring, or visible with observe="visible"); `case_rules`
    one case's. A run rule whose outcome is roll back restores the previous round's states.
    `recheck` re-runs each start uncached that many times (an unstable validator shows).
    With `resume=True` the run continues from what `ledger` holds for `run_id`; a run that
    already stopped is returned as recorded. Errors other than an exhausted budget record
    a stop and raise RunInterrupted carrying the run so far.
    """
    if rounds < 0:
        raise InvalidSetting(f"rounds must be >= 0, got {rounds}")
    if not tasks:
        raise InvalidSetting("run needs at least one task")
    if len({t.id for t in tasks}) != len(tasks):
        raise InvalidSetting("task ids must be unique")
    if keep not in KEEP_MODES:
        raise InvalidSetting(f"keep must be one of {KEEP_MODES}, got {keep!r}")
    from labkit.record.ledger import Ledger, new_run_id

    strat = _as_strategy(strategy)
    ledger = ledger if ledger is not None else Ledger()
    run_id = run_id or new_run_id("run")
    rec = Recorder(run_id, ledger, _checker(validator, cache), budget, validation_cost, strat.simulated)
    engine = _Engine(rec, tuple(tasks), strat, rounds, tuple(rules), tuple(case_rules), keep,
                     stop_at_green, observe, recheck, max_experiments, workers)  # fmt: skip
    recorded = resuming.read(ledger, run_id) if resume else None
    if recorded is not None and recorded.stop is not None:
        return engine.as_recorded(recorded)
    return engine.go(recorded)


@dataclass
class _Engine:
    rec: Recorder
    tasks: tuple[Task, ...]
    strategy: Strategy
    rounds: int
    rules: tuple[Rule, ...]
    case_rules: tuple[Rule, ...]
    keep: Keep
    stop_at_green: bool
    observe: str
    recheck: int
    max_experiments: int
    workers: int
    cases: dict[str, _Case] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)
    verifications: list[Verification] = field(default_factory=list)
    stops: list[StopRecord] = field(default_factory=list)
    risk: dict[int, float] = field(default_factory=dict)
    reached: int = 0
    _before: dict[str, tuple[Candidate, Verdict, str]] = field(default_factory=dict)

    # -- the run ---------------------------------------------------------------------------

    def go(self, recorded: resuming.Recorded | None) -> EngineRun:
        stop: DecisionRecord | None = None
        try:
            for task in self.tasks:
                bad = sorted(set(task.patch_cap) - _CAP_KEYS)
                if bad:
                    raise InvalidSetting(f"case {task.id!r}: unknown patch_cap key(s) {bad}; use {sorted(_CAP_KEYS)}")
            first = self._begin(recorded)
            for r in range(first, self.rounds + 1):
                active = [c for c in self.cases.values() if c.stop is None and c.done < r]
                for c in active:
                    self._halt_if_done(c, r)
                active = [c for c in active if c.stop is None]
                if not active:
                    break
                self.reached = r
                history = self._round(r, active)
                fired = check(self.rules, history)
                if fired is not None:
                    stop = self._run_stop(r, fired)
                    break
                if all(c.stop is not None for c in self.cases.values()):
                    break
        except BudgetExhausted as exc:
            stop = DecisionRecord(Decision.STOP, f"budget exhausted: {exc}", "budget")
        except Exception as exc:
            why = StopRecord(Decision.STOP, f"{resuming.INTERRUPTED}: {type(exc).__name__}: {exc}", resuming.INTERRUPTED)
            out = self._finish(why, error=exc)
            trace = next(iter(out.traces.values()), None) if len(self.tasks) == 1 else None
            raise RunInterrupted(f"run {self.rec.run_id} interrupted: {type(exc).__name__}: {exc}", out, trace) from exc
        return self._finish(stop if stop is not None else self._ending())

    def _begin(self, recorded: resuming.Recorded | None) -> int:
        """Step 1 and step 2 on each start (or pick each case up where the ledger left it)."""
        held = recorded.cases if recorded is not None else {}
        if recorded is not None:
            self.rec.usage = recorded.usage
        else:
            self.rec.log(None, 0, Role.EXPERIMENT, Kind.START, detail={
                "strategy": self.strategy.name, "cases": [t.id for t in self.tasks], "rounds": self.rounds,
                "keep": self.keep, "observe": self.observe, "recheck": self.recheck,
                "rules": [getattr(r, "name", type(r).__name__) for r in self.rules],
                "case_rules": [getattr(r, "name", type(r).__name__) for r in self.case_rules],
            })  # fmt: skip
        fresh = [t for t in self.tasks if t.id not in held]
        for task in self.tasks:
            if task.id in held:
                h = held[task.id]
                c = _Case(task, h.candidate, h.verdict, h.state, h.candidate, h.verdict, h.round,
                          list(h.rejected), stop=h.stop, scored=set(h.scored))  # fmt: skip
                self.cases[task.id] = c
                self.rec.log(task, h.round, Role.DECISION, Kind.RESUME, outputs=candidate_json(h.candidate),
                             detail={"candidate": h.candidate.digest, "state": h.state})  # fmt: skip
                self.steps.append(Step.of(task.id, h.round, h.verdict.evidence))
        for task in fresh:  # step 1: the acceptance is fixed before the first run
            self.rec.log(task, 0, Role.DECISION, Kind.DEFINE, outputs=task.suite.digest,
                         evidence={"fail_to_pass": list(task.suite.fail_to_pass), "pass_to_pass": list(task.suite.pass_to_pass)},
                         detail={"strategy": self.strategy.name, "hidden": task.hidden.digest if task.hidden else ""})  # fmt: skip
            self.rec.log(task, 0, Role.EXECUTOR, Kind.GENERATE, outputs=candidate_json(task.start),
                         detail={"candidate": task.start.digest, "label": task.start.label, "state": task.start_state})  # fmt: skip
        checks = self._map(self._start_checks, fresh)
        scores = self._map(lambda t: self._score_check(t, t.start), fresh)
        for task, runs, score in zip(fresh, checks, scores, strict=True):
            verdicts = [
                self.rec.verified(task, 0, task.start, ch, None, "start" if i == 0 else f"re-run {i} (uncached)")
                for i, ch in enumerate(runs)
            ]
            self.verifications += [Verification.of(v.evidence, task.id) for v in verdicts]
            c = _Case(task, task.start, verdicts[0], task.start_state, task.start, verdicts[0])
            self.cases[task.id] = c
            self.steps.append(Step.of(task.id, 0, verdicts[0].evidence))
            self.rec.scored(task, 0, task.start, score, verdicts[0], c.state)
            c.scored.add(0)
        if fresh:
            self._case_rules(0, fresh_only={t.id for t in fresh})
        # Cases decided in the last recorded round but not scored yet: score them now.
        for c in self.cases.values():
            if c.done not in c.scored:
                self.rec.scored(c.task, c.done, c.candidate, self._score_check(c.task, c.candidate), c.verdict, c.state)
                c.scored.add(c.done)
        done = [c.done for c in self.cases.values() if c.stop is None] or [0]
        self.reached = max(c.done for c in self.cases.values()) if self.cases else 0
        return min(done) + 1

    def _start_checks(self, task: Task) -> list[Checked]:
        runs = [self.rec.check(task, 0, task.start)]
        if self.recheck:
            signature = Verification.of(runs[0].verdict.evidence).signature
            for _ in range(self.recheck):
                again = self.rec.check(task, 0, task.start, fresh=True)
                runs.append(again)
                if Verification.of(again.verdict.evidence).signature != signature:
                    break
        return runs

    def _score_check(self, task: Task, candidate: Candidate) -> Checked | None:
        return self.rec.check(task, 0, candidate, hidden=True) if task.hidden is not None else None

    def _map(self, fn: Any, items: Sequence[Any]) -> list[Any]:
        """Validation work in parallel when nothing is paid through a budget (it is not shared)."""
        if self.workers <= 1 or self.rec.budget is not None or len(items) < 2:
            return [fn(x) for x in items]
        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            return list(pool.map(fn, items))

    def _halt_if_done(self, c: _Case, r: int) -> None:
        a = assess(c.verdict)
        if c.verdict.quarantined or (self.stop_at_green and a.decision is Decision.STOP):
            self._case_stop(c, r - 1, StopRecord(a.decision, a.reason, a.rule, Stop.REPORT_UNKNOWNS, c.task.id))

    def _case_stop(self, c: _Case, r: int, record: StopRecord) -> None:
        c.stop = record
        if len(self.tasks) > 1:  # a one-case run's stop is the run's stop
            self.rec.log(c.task, r, Role.DECISION, Kind.STOP, outputs=candidate_json(c.candidate),
                         detail={**detail_of(record), "outcome": str(record.outcome), "candidate": c.candidate.digest})  # fmt: skip

    # -- one round -------------------------------------------------------------------------

    def _round(self, r: int, active: list[_Case]) -> History:
        before = {cid: (c.candidate, c.verdict, c.state) for cid, c in self.cases.items()}
        work: list[tuple[_Case, Proposal, tuple[Observation, ...], list[Prepared]]] = []
        for c in active:
            situation = situation_for(r, c.task, c.candidate, c.verdict, tuple(c.rejected), c.state)
            proposal, obs = ask(self.rec, self.strategy, situation, c.task, self.max_experiments)
            prepared = [prepare(self.rec, c.task, r, c.candidate, ch) for ch in proposal.children]
            work.append((c, proposal, obs, prepared))
        jobs = [(c, p) for c, _, _, prepared in work for p in prepared if p.patched is not None]
        checked = self._map(lambda job: self.rec.check(job[0].task, r, job[1].patched), jobs)
        results = {id(p): ch for (_, p), ch in zip(jobs, checked, strict=True)}
        risk = 0.0
        for c, proposal, obs, prepared in work:
            risk += self._decide(r, c, proposal, obs, prepared, results)
        self.risk[r] = risk
        scores = self._map(lambda c: self._score_check(c.task, c.candidate), active)
        for c, score in zip(active, scores, strict=True):
            self.rec.scored(c.task, r, c.candidate, score, c.verdict, c.state)
            c.scored.add(r)
        self._before = before
        return self._case_rules(r)

    def _decide(self, r: int, c: _Case, proposal: Proposal, obs: tuple[Observation, ...],
                prepared: list[Prepared], results: dict[int, Checked]) -> float:  # fmt: skip
        """Steps 5 and 6 for one case: record each child's verdict, hold the best kept child."""
        held, held_verdict = c.candidate, c.verdict
        attempts: list[Attempt] = []
        for p in prepared:
            if p.refusal is not None:
                attempts.append(Attempt(p.child, None, None, None, p.refusal))
                continue
            assert p.patched is not None
            retest = self.rec.verified(c.task, r, p.patched, results[id(p)], held_verdict, f"proposal {p.child.name or r}")
            self.verifications.append(Verification.of(retest.evidence, c.task.id))
            d = decide(held_verdict, retest, p.size_problem, self.keep)
            attempts.append(Attempt(p.child, p.patched, p.size, retest, d))
            self.steps.append(Step.of(c.task.id, r, retest.evidence, kept=d.decision is Decision.KEEP))
        if attempts:
            i = best([(a.decision, a.retest) for a in attempts])
            chosen: Attempt | None = attempts[i]
            decision = attempts[i].decision
        else:
            chosen = None
            if proposal.idle:
                decision = DecisionRecord(Decision.INVESTIGATE, "nothing proposed: the case holds", "idle")
            else:
                why = proposal.failure or "strategy gave no patch"
                decision = DecisionRecord(Decision.INVESTIGATE, f"reflection unusable: {why}", "reflection")
        kept = decision.decision is Decision.KEEP and chosen is not None and chosen.patched is not None
        risk = 0.0
        if kept and chosen is not None and chosen.patched is not None and chosen.retest is not None:
            c.candidate, c.verdict = chosen.patched, chosen.retest
            c.state = chosen.child.name or chosen.patched.label or f"round-{r}"
            risk = float(chosen.size.lines) if chosen.size else 0.0
        else:
            self.steps.append(Step.of(c.task.id, r, c.verdict.evidence))
        cause = proposal.record.hypothesis.cause if proposal.record else ""
        if decision.decision is Decision.ROLL_BACK and cause:
            c.rejected.append(cause)
        rnd = Round(r, held, held_verdict, proposal, obs,
                    chosen.patched if chosen else None, chosen.size if chosen else None,
                    chosen.retest if chosen else None, decision, self.rec.usage, c.task.id, tuple(attempts), c.state)  # fmt: skip
        c.rounds.append(rnd)
        c.done = r
        self.rec.log(c.task, r, Role.DECISION, Kind.DECIDE, outputs=candidate_json(c.candidate),
                     detail={**detail_of(decision), "candidate": c.candidate.digest, "proposal": c.state,
                             "offered": chosen.child.name if chosen else "", "cause": cause, "lines": risk,
                             "cost_so_far": self.rec.usage.cost_units,
                             "children": [{"name": a.child.name, **detail_of(a.decision)} for a in attempts]})  # fmt: skip
        if decision.decision is Decision.STOP:
            self._case_stop(c, r, StopRecord(decision.decision, decision.reason, decision.rule, Stop.ESCALATE, c.task.id))
        return risk

    def _case_rules(self, r: int, fresh_only: set[str] | None = None) -> History:
        history = History(self._observed(), tuple(self.steps), tuple(self.verifications))
        for c in self.cases.values():
            if c.stop is not None or (fresh_only is not None and c.task.id not in fresh_only):
                continue
            fired = check(self.case_rules, history.for_case(c.task.id))
            if fired is not None:
                record = StopRecord(fired.decision, fired.reason, fired.rule, fired.outcome, c.task.id)
                self.stops.append(record)
                self._case_stop(c, r, record)
        return history

    def _observed(self) -> tuple[Any, ...]:
        """Per-round counts the run rules read, rebuilt from the ledger, plus risk per round."""
        frame = accounting.from_ledger(self.rec.ledger.frame(self.rec.run_id), field="correct" if self.observe == "hidden" else "visible")
        stats = accounting.round_stats(frame)
        return tuple(type(s)(s.round, s.fixed, s.broken, s.wrong_before, s.right_before, s.cost, s.seconds,
                             self.risk.get(s.round, 0.0)) for s in stats)  # fmt: skip

    def _run_stop(self, r: int, fired: StopRecord) -> StopRecord:
        self.stops.append(fired)
        if fired.outcome is Stop.ROLL_BACK:  # the round did more harm than good: restore it
            for cid, (cand, verdict, state) in self._before.items():
                c = self.cases[cid]
                if c.candidate.digest != cand.digest:
                    c.candidate, c.verdict, c.state = cand, verdict, state
                    self.rec.log(c.task, r, Role.DECISION, Kind.DECIDE, outputs=candidate_json(cand),
                                 detail={"decision": Decision.ROLL_BACK.value, "reason": f"run stop: {fired.reason}",
                                         "rule": fired.rule, "candidate": cand.digest, "proposal": state, "delta_f": 0,
                                         "cost_so_far": self.rec.usage.cost_units})  # fmt: skip
        return fired

    # -- the ending ------------------------------------------------------------------------

    def _ending(self) -> DecisionRecord:
        cases = list(self.cases.values())
        if len(cases) == 1 and cases[0].stop is not None:
            return cases[0].stop
        if cases and all(c.stop is not None for c in cases):
            return DecisionRecord(Decision.STOP, "every case stopped", "all-stopped")
        if self.stop_at_green and cases and all(assess(c.verdict).decision is Decision.STOP for c in cases):
            return assess(cases[0].verdict)
        return DecisionRecord(Decision.STOP, f"round cap reached ({self.rounds}); report unknowns", "round-cap")

    def _finish(self, stop: DecisionRecord, error: BaseException | None = None) -> EngineRun:
        record = stop if isinstance(stop, StopRecord) else StopRecord(stop.decision, stop.reason, stop.rule)
        single = self.tasks[0] if len(self.tasks) == 1 else None
        held = next(iter(self.cases.values()), None) if single else None
        try:
            self.rec.log(single, self.reached, Role.DECISION, Kind.STOP,
                         outputs=candidate_json(held.candidate) if held else None,
                         detail={**detail_of(record), "outcome": str(record.outcome), "run": True,
                                 "candidate": held.candidate.digest if held else "",
                                 "error": f"{type(error).__name__}: {error}" if error else ""})  # fmt: skip
        except LedgerError:
            if error is None:
                raise
        return self._result(stop)

    def _result(self, stop: DecisionRecord) -> EngineRun:
        traces = {}
        for cid, c in self.cases.items():
            rolled = c.rounds and c.rounds[-1].kept.digest != c.candidate.digest
            traces[cid] = Trace(
                self.rec.run_id, c.task.suite.digest, self.rec.checker.id, self.strategy.name, self.strategy.simulated,
                c.start, c.start_verdict, tuple(c.rounds), c.stop or stop, cid, c.state,
                c.candidate if rolled else None, c.verdict if rolled else None,
            )  # fmt: skip
        return EngineRun(
            self.rec.run_id, self.rec.ledger, self.tasks, traces, self.reached, tuple(self.stops), stop,
            self.strategy.simulated, self.strategy.name, {cid: c.state for cid, c in self.cases.items()},
        )  # fmt: skip

    def as_recorded(self, recorded: resuming.Recorded) -> EngineRun:
        """A finished run, as its ledger records it: nothing runs, nothing is paid or appended."""
        assert recorded.stop is not None
        for task in self.tasks:
            h = recorded.cases.get(task.id)
            if h is not None:
                self.cases[task.id] = _Case(task, h.candidate, h.verdict, h.state, h.candidate, h.verdict, h.round, stop=h.stop)
        self.reached = recorded.last_round
        self.stops = [h.stop for h in recorded.cases.values() if h.stop is not None]
        return self._result(recorded.stop)


# ---------------------------------------------------------------------------- one case


def run_loop(
    start: Candidate,
    suite: AcceptanceSuite,
    validator: Validator,
    reflector: Strategy | Any,
    *,
    max_rounds: int = 5,
    max_experiments: int = 2,
    patch_cap: dict[str, int] | None = None,
    stop_rules: Sequence[Rule] = (),
    ledger: Ledger | None = None,
    budget: Budget | None = None,
    run_id: str = "",
    validation_cost: float = 1.0,
    resume: bool = False,
) -> Trace:
    """One case through the engine until resolved, a stop rule fires, the budget runs out or
    `max_rounds`. `patch_cap` limits patch size, e.g. {"max_hunks": 2, "max_lines": 8}: a larger
    patch is validated but rolled back as not attributable. With `resume=True` the run continues
    from `ledger` (the returned trace holds the new rounds only; a finished run returns as recorded).
    """
    task = Task(suite.name, start, suite, patch_cap=dict(patch_cap or {}))
    try:
        out = run([task], reflector, validator, rounds=max_rounds, rules=stop_rules, max_experiments=max_experiments,
                  ledger=ledger, budget=budget, run_id=run_id or f"run-{int(time.time() * 1000):x}",
                  validation_cost=validation_cost, resume=resume)  # fmt: skip
    except RunInterrupted:
        raise
    if task.id not in out.traces:  # e.g. the budget could not pay for the first validation
        raise RunInterrupted(f"run {out.run_id} ended before its start was validated: {out.stop.reason}", out)
    return out.traces[task.id]


@dataclass(frozen=True)
class Checkpointed:
    """A checkpointed sequence: each step's verdict, and the last green checkpoint held."""

    steps: tuple[tuple[Patch, Verdict | None, str], ...]  # (step, verdict or None, what happened)
    held: Candidate
    verdict: Verdict

    @property
    def green(self) -> int:
        """How many steps were applied and kept."""
        return sum(1 for _, _, what in self.steps if what == "kept")


def run_sequence(
    candidate: Candidate,
    steps: Sequence[Patch],
    suite: AcceptanceSuite,
    validator: Validator | Checker,
    *,
    ledger: Ledger | None = None,
    run_id: str = "sequence",
) -> Checkpointed:
    """Dependent changes as a checkpointed sequence through the engine's validation and ledger.

    Each step is applied to the last green checkpoint, validated and recorded. A step that
    does not apply, breaks a protective test or raises an alarm is recorded and the sequence
    returns to the last green checkpoint, which it hands back with every step's evidence.
    """
    from labkit.record.ledger import Ledger

    task = Task(run_id, candidate, suite)
    rec = Recorder(run_id, ledger if ledger is not None else Ledger(), _checker(validator, None), None, 1.0, False)
    verdict = rec.verified(task, 0, candidate, rec.check(task, 0, candidate), None, "start")
    out: list[tuple[Patch, Verdict | None, str]] = []
    held = candidate
    for i, step in enumerate(steps, start=1):
        try:
            nxt = patches.apply(held, step)
        except PatchError as exc:
            out.append((step, None, f"does not apply: {exc}"))
            rec.log(task, i, Role.DECISION, Kind.CHECKPOINT, inputs=step.diff,
                    detail={"applied": False, "reason": str(exc), "candidate": held.digest})  # fmt: skip
            break
        after = rec.verified(task, i, nxt, rec.check(task, i, nxt), verdict, f"step {i}")
        green = not (set(after.pass_to_fail) - set(verdict.pass_to_fail)) and not after.quarantined
        out.append((step, after, "kept" if green else "rolled back"))
        rec.log(task, i, Role.DECISION, Kind.CHECKPOINT, inputs=step.diff,
                detail={"applied": True, "resolved": after.resolved, "green": green,
                        "candidate": (nxt if green else held).digest})  # fmt: skip
        if not green:
            break
        held, verdict = nxt, after
    return Checkpointed(tuple(out), held, verdict)

"""The engine's run of a suite of cases: lockstep rounds, case and run stop rules, endings.

`labkit.loop.engine.run` builds a `Runner` and calls `go` (or `as_recorded` for a finished
run being resumed). One round (steps 3 to 6 for every active case) is `OneRound`
(labkit.loop.engine.one_round); the steps of one case are in `labkit.loop.engine.steps`.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from labkit.core import patch as patches
from labkit.core.errors import BudgetExhausted, InvalidSetting, RunInterrupted
from labkit.core.types import Candidate, Decision, DecisionRecord, Verdict
from labkit.grading.verdicts import Checked, rerun
from labkit.loop.engine import accounting, ending
from labkit.loop.engine import resume as resuming
from labkit.loop.engine.decide import Keep, assess
from labkit.loop.engine.ending import CaseState
from labkit.loop.engine.expand import Confirmation, Expand, Frontier, FrontierLimits, Node, Winner
from labkit.loop.engine.failure_policy import Failures
from labkit.loop.engine.one_round import OneRound
from labkit.loop.engine.recorder import Paid, Prices, Recorder, candidate_json
from labkit.loop.engine.steps import detail_of
from labkit.loop.engine.stopping import History, Rule, Step, Stop, StopRecord, Verification, check
from labkit.loop.engine.strategy import Strategy
from labkit.loop.engine.trace import EngineRun, Task
from labkit.record.events import Kind, Role

__all__ = ["Runner"]

_CAP_KEYS = frozenset(p for p in inspect.signature(patches.check_size).parameters if p != "patch")


@dataclass(kw_only=True)
class Runner(OneRound):
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
    on_alarm: str = "continue"  # an alarmed child is quarantined and rolled back; "stop" ends its case
    expand: Expand = "hold"  # see labkit.loop.engine.expand
    limits: FrontierLimits = field(default_factory=FrontierLimits)
    confirmation: Confirmation | None = None  # the winner-plus-confirmation ending, if asked for
    prices: Prices = field(default_factory=Prices)
    failures: Failures | None = None  # classify and obey a failed step (labkit.loop.engine.failure_policy)
    build: Callable[[Candidate], object] | None = None  # run on each executed candidate inside step 4
    retests: dict[int, Verdict] = field(default_factory=dict)
    unexecuted: dict[str, tuple[str, ...]] = field(default_factory=dict)
    cases: dict[str, CaseState] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)
    verifications: list[Verification] = field(default_factory=list)
    stops: list[StopRecord] = field(default_factory=list)
    risk: dict[int, float] = field(default_factory=dict)
    reached: int = 0
    winners: dict[str, Winner] = field(default_factory=dict)
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
            why = StopRecord(
                Decision.STOP, f"{resuming.INTERRUPTED}: {type(exc).__name__}: {exc}", resuming.INTERRUPTED
            )
            out = self._finish(why, error=exc)
            trace = next(iter(out.traces.values()), None) if len(self.tasks) == 1 else None
            raise RunInterrupted(f"run {self.rec.run_id} interrupted: {type(exc).__name__}: {exc}", out, trace) from exc
        return self._finish(
            stop if stop is not None else ending.ending(list(self.cases.values()), self.stop_at_green, self.rounds)
        )

    def _begin(self, recorded: resuming.Recorded | None) -> int:
        """Step 1 and step 2 on each start (or pick each case up where the ledger left it)."""
        held = recorded.cases if recorded is not None else {}
        if recorded is not None:
            self.rec.usage = recorded.usage
            self.rec.paid_before(recorded.paid)  # the same run: what it validated before stays paid
        else:
            self.rec.log(
                None,
                0,
                Role.EXPERIMENT,
                Kind.START,
                detail={
                    "strategy": self.strategy.name,
                    "cases": [t.id for t in self.tasks],
                    "rounds": self.rounds,
                    "keep": self.keep,
                    "observe": self.observe,
                    "recheck": self.recheck,
                    "rules": [getattr(r, "name", type(r).__name__) for r in self.rules],
                    "case_rules": [getattr(r, "name", type(r).__name__) for r in self.case_rules],
                    **(self._preregistered() if self.expand != "hold" else {}),  # hold-one runs record as before
                },
            )
        fresh = [t for t in self.tasks if t.id not in held]
        for task in self.tasks:
            if task.id in held:
                h = held[task.id]
                c = CaseState(
                    task=task,
                    candidate=h.candidate,
                    verdict=h.verdict,
                    state=h.state,
                    start=h.candidate,
                    start_verdict=h.verdict,
                    done=h.round,
                    rejected=list(h.rejected),
                    stop=h.stop,
                    scored=set(h.scored),
                )
                self.cases[task.id] = c
                self.rec.log(
                    task,
                    h.round,
                    Role.DECISION,
                    Kind.RESUME,
                    outputs=candidate_json(h.candidate),
                    detail={"candidate": h.candidate.digest, "state": h.state},
                )
                self.steps.append(Step.of(task.id, h.round, h.verdict.evidence))
        for task in fresh:  # step 1: the acceptance is fixed before the first run
            self.rec.log(
                task,
                0,
                Role.DECISION,
                Kind.DEFINE,
                outputs=task.suite.digest,
                evidence={"fail_to_pass": list(task.suite.fail_to_pass), "pass_to_pass": list(task.suite.pass_to_pass)},
                detail={"strategy": self.strategy.name, "hidden": task.hidden.digest if task.hidden else ""},
            )
            self.rec.log(
                task,
                0,
                Role.EXECUTOR,
                Kind.GENERATE,
                outputs=candidate_json(task.start),
                detail={"candidate": task.start.digest, "label": task.start.label, "state": task.start_state},
            )
        if not self.prices.start:  # the starts' verdicts are the tasks' input: already paid for
            self.rec.paid_before((t.start.digest, t.suite.digest, self.rec.checker.id) for t in fresh)
        checks = self._map(self._start_checks, fresh)
        scores = self._map(lambda t: self._score_check(t, t.start), fresh)
        for task, runs, score in zip(fresh, checks, scores, strict=True):
            verdicts = [
                self.rec.verified(task, 0, task.start, ch, None, "start" if i == 0 else f"re-run {i} (uncached)")
                for i, ch in enumerate(runs)
            ]
            self.verifications += [Verification.of(v.evidence, task.id) for v in verdicts]
            c = CaseState(
                task=task,
                candidate=task.start,
                verdict=verdicts[0],
                state=task.start_state,
                start=task.start,
                start_verdict=verdicts[0],
            )
            if self.expand != "hold":
                c.frontier = Frontier(self.expand, self.limits)
                c.frontier.push(Node(candidate=task.start, verdict=verdicts[0], state=task.start_state))
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

    def _preregistered(self) -> dict[str, object]:
        """A frontier run's settings, recorded before any candidate is seen: the expansion policy,
        its limits, its price list, the winner rule and the budget's limit and confirmation reserve."""
        out: dict[str, object] = {
            "expand": self.expand,
            "limits": vars(self.limits),
            "prices": self.prices.listed(self.rec.validation_cost),
        }
        if self.confirmation is not None:
            out["winner_rule"] = self.confirmation.rule.name
        if self.rec.budget is not None:
            limit = self.rec.budget.limit.cost_units
            out["limit"] = limit if math.isfinite(limit) else None
            out["reserve"] = self.rec.budget.confirmation.cost_units
        return out

    def _start_checks(self, task: Task) -> list[Paid]:
        again = partial(self.rec.check, task, 0, task.start, fresh=True)  # each re-run paid, uncached
        first = self.rec.check(task, 0, task.start, given=not self.prices.start)
        return rerun(first, again, self.recheck, lambda p: p.verdict.evidence)

    def _score_check(self, task: Task, candidate: Candidate) -> Checked | None:
        """Hidden scoring, unless the hidden suite is the sealed final set the run confirms on:
        then only the winner's pass/fail ever comes out of it, and rounds are scored visibly."""
        if task.hidden is None or self.confirmation is not None:
            return None
        return self.rec.check(task, 0, candidate, hidden=True)

    def _map(self, fn: Any, items: Sequence[Any]) -> list[Any]:
        """Validation work in parallel when nothing is paid through a budget (it is not shared) and
        no retry is recorded from a worker (a run that classifies failures validates in turn)."""
        if self.workers <= 1 or self.rec.budget is not None or self.failures is not None or len(items) < 2:
            return [fn(x) for x in items]
        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            return list(pool.map(fn, items))

    def _halt_if_done(self, c: CaseState, r: int) -> None:
        a = assess(c.verdict)
        if c.verdict.quarantined or (self.stop_at_green and a.decision is Decision.STOP):
            self._case_stop(c, r - 1, StopRecord(a.decision, a.reason, a.rule, Stop.REPORT_UNKNOWNS, c.task.id))
        elif c.frontier is not None and not c.frontier.waiting:
            why = f"case {c.task.id}: the frontier is empty after {c.frontier.expanded} expansion(s)"
            self._case_stop(c, r - 1, StopRecord(Decision.STOP, why, "frontier-empty", Stop.REPORT_UNKNOWNS, c.task.id))

    def _case_stop(self, c: CaseState, r: int, record: StopRecord) -> None:
        c.stop = record
        if len(self.tasks) > 1:  # a one-case run's stop is the run's stop
            self.rec.log(
                c.task,
                r,
                Role.DECISION,
                Kind.STOP,
                outputs=candidate_json(c.candidate),
                detail={**detail_of(record), "outcome": str(record.outcome), "candidate": c.candidate.digest},
            )

    # -- the rules -------------------------------------------------------------------------

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
        frame = accounting.from_ledger(
            self.rec.ledger.frame(self.rec.run_id), field="correct" if self.observe == "hidden" else "visible"
        )
        stats = accounting.round_stats(frame)
        return tuple(replace(s, risk=self.risk.get(s.round, 0.0)) for s in stats)

    def _run_stop(self, r: int, fired: StopRecord) -> StopRecord:
        self.stops.append(fired)
        if fired.outcome is Stop.ROLL_BACK:  # the round did more harm than good: restore it
            for cid, (cand, verdict, state) in self._before.items():
                c = self.cases[cid]
                if c.candidate.digest != cand.digest:
                    c.candidate, c.verdict, c.state = cand, verdict, state
                    self.rec.log(
                        c.task,
                        r,
                        Role.DECISION,
                        Kind.DECIDE,
                        outputs=candidate_json(cand),
                        detail={
                            "decision": Decision.ROLL_BACK.value,
                            "reason": f"run stop: {fired.reason}",
                            "rule": fired.rule,
                            "candidate": cand.digest,
                            "proposal": state,
                            "delta_f": 0,
                            "cost_so_far": self.rec.usage.cost_units,
                        },
                    )
        return fired

    # -- the ending ------------------------------------------------------------------------

    def _finish(self, stop: DecisionRecord, error: BaseException | None = None) -> EngineRun:
        if self.confirmation is not None and error is None:
            self.winners = ending.confirm_winners(self.rec, list(self.cases.values()), self.confirmation, self.reached)
        winners = self.winners if self.confirmation is not None else None
        ending.record_stop(self.rec, self.tasks, self.cases, self.reached, stop, error, winners)
        return self._result(stop)

    def _result(self, stop: DecisionRecord) -> EngineRun:
        return ending.result(
            self.rec, self.tasks, self.strategy, self.cases, self.reached, self.stops, stop, self.winners
        )

    def as_recorded(self, recorded: resuming.Recorded) -> EngineRun:
        """A finished run, as its ledger records it: nothing runs, nothing is paid or appended."""
        assert recorded.stop is not None
        for task in self.tasks:
            h = recorded.cases.get(task.id)
            if h is not None:
                self.cases[task.id] = CaseState(
                    task=task,
                    candidate=h.candidate,
                    verdict=h.verdict,
                    state=h.state,
                    start=h.candidate,
                    start_verdict=h.verdict,
                    done=h.round,
                    stop=h.stop,
                )
        self.reached = recorded.last_round
        self.stops = [h.stop for h in recorded.cases.values() if h.stop is not None]
        return self._result(recorded.stop)

"""Stop rules: small objects that read a loop's history and either say why to stop, or nothing.

A rule is a callable `rule(history) -> StopRecord | None`; None means "continue". The
signals are the chapter's (seed 000, worked example B): marginal net at or below a
threshold, two rounds without new failure evidence, a test oscillating between two
patches, an unstable or disagreeing validator, and caps on cost, time and risk. Each
returns one of four outcomes — continue, roll back, report unknowns, escalate — carried on
a `StopRecord`, which is a `labkit.core.types.DecisionRecord` (roll back -> ROLL_BACK; report
unknowns and escalate -> STOP), so anything that reads decisions reads these.

Rules look at digests (candidate state, evidence, verdict signatures), never at text:
"the same test failing the same way" is a key comparison, not a string match of logs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from labkit.core.types import Decision, DecisionRecord
from labkit.loop.engine.history import History, RoundStats, Step, Verification, failure_keys

__all__ = [
    "AnyOf",
    "Cap",
    "History",
    "MarginalNet",
    "NoNewEvidence",
    "Oscillation",
    "RoundStats",
    "Rule",
    "Stalled",
    "Step",
    "Stop",
    "StopRecord",
    "UnstableValidator",
    "Verification",
    "check",
    "check_all",
    "failure_keys",
    "first_stop",
    "new_evidence",
    "project",
]


class Stop(StrEnum):
    """The four outcomes of a stop decision (seed 000); rules only ever return the last three."""

    CONTINUE = "continue"
    ROLL_BACK = "roll back"
    REPORT_UNKNOWNS = "report unknowns"
    ESCALATE = "escalate"


_DECISION = {
    Stop.CONTINUE: Decision.INVESTIGATE,
    Stop.ROLL_BACK: Decision.ROLL_BACK,
    Stop.REPORT_UNKNOWNS: Decision.STOP,
    Stop.ESCALATE: Decision.STOP,
}


@dataclass(frozen=True)
class StopRecord(DecisionRecord):
    """A DecisionRecord with the finer outcome and, for per-case rules, the case it is about."""

    outcome: Stop = Stop.REPORT_UNKNOWNS
    case: str = ""  # "" when the decision is about the whole run


def _stop(outcome: Stop, rule: str, reason: str, case: str = "") -> StopRecord:
    where = f"case {case}: " if case else ""
    return StopRecord(_DECISION[outcome], f"{outcome}: {where}{reason}", rule, outcome, case)


Rule = Callable[[History], "StopRecord | None"]


def check(rules: Iterable[Rule], history: History) -> StopRecord | None:
    """The first rule that fires, in the order given; None if every rule says continue."""
    for rule in rules:
        record = rule(history)
        if record is not None:
            return record
    return None


def check_all(rules: Iterable[Rule], history: History) -> list[StopRecord]:
    """Every rule that fires (for reports: which signals were up at once)."""
    return [r for r in (rule(history) for rule in rules) if r is not None]


def first_stop(rules: Iterable[Rule], rounds: Sequence[RoundStats]) -> tuple[int, StopRecord] | None:
    """Replay finished rounds: after which round would `rules` first have stopped, and why.

    Only the per-round counts are replayed (steps and verifications are empty), so this
    is for count-based rules: marginal net and caps.
    """
    rules = list(rules)
    for k in range(1, len(rounds) + 1):
        record = check(rules, History(tuple(rounds[:k])))
        if record is not None:
            return rounds[k - 1].round, record
    return None


@dataclass(frozen=True)
class AnyOf:
    """Compose rules: fires with the first of `rules` that fires."""

    rules: tuple[Rule, ...]
    name: str = "any_of"

    def __call__(self, history: History) -> StopRecord | None:
        return check(self.rules, history)


# -- the rules ---------------------------------------------------------------------------


def project(rounds: Sequence[RoundStats]) -> tuple[float, float]:
    """Expected (fixed, broken) of the next round if the last two rounds' trend continues.

    Each rate moves by the same factor again (fix rate 0.35 -> 0.14 -> 0.06); it is applied
    to the cases that will be wrong / right going into the next round.
    """
    if len(rounds) < 2:
        raise ValueError("projecting a trend needs at least two rounds")
    prev, last = rounds[-2], rounds[-1]

    def _next(before: float, now: float) -> float:
        if before == 0:
            return now
        return min(1.0, now * (now / before))

    wrong = last.wrong_before - last.fixed + last.broken
    right = last.right_before + last.fixed - last.broken
    fix = _next(prev.fix_rate, last.fix_rate) * wrong
    brk = _next(prev.break_rate, last.break_rate) * right
    return fix, brk


@dataclass(frozen=True)
class MarginalNet:
    """Stop when a round's net (fixed - broken) is at or below `threshold`.

    With `project=True` it also stops *before* a round whose projected net (see `project`)
    is at or below the threshold: the chapter's point that round 3 should not run by
    default. An observed negative net rolls the round back; otherwise report unknowns.
    """

    threshold: float = 0.0
    project: bool = True
    name: str = "marginal_net"

    def __call__(self, history: History) -> StopRecord | None:
        if not history.rounds:
            return None
        last = history.rounds[-1]
        if last.net <= self.threshold:
            outcome = Stop.ROLL_BACK if last.net < 0 else Stop.REPORT_UNKNOWNS
            why = f"round {last.round} net {last.net} <= {self.threshold:g} (fixed {last.fixed}, broken {last.broken})"
            return _stop(outcome, self.name, why)
        if self.project and len(history.rounds) >= 2:
            fix, brk = project(history.rounds)
            if fix - brk <= self.threshold:
                prev = history.rounds[-2]
                why = (
                    f"projected round {last.round + 1} net {fix - brk:+.1f} <= {self.threshold:g}: "
                    f"fix rate {prev.fix_rate:.3f} -> {last.fix_rate:.3f} (next ~{fix:.1f} fixed), "
                    f"break rate {prev.break_rate:.3f} -> {last.break_rate:.3f} (next ~{brk:.1f} broken)"
                )
                return _stop(Stop.REPORT_UNKNOWNS, self.name, why)
        return None


def _fresh(steps: Iterable[Step], keys: Callable[[Step], set[tuple[str, str]]]) -> dict[int, int]:
    """Per round, how many of its steps' keys no earlier round had."""
    by_round: dict[int, set[tuple[str, str]]] = defaultdict(set)
    for s in steps:
        by_round[s.round] |= keys(s)
    seen: set[tuple[str, str]] = set()
    out = {}
    for r in sorted(by_round):
        out[r] = len(by_round[r] - seen)
        seen |= by_round[r]
    return out


@dataclass(frozen=True)
class NoNewEvidence:
    """Stop after `rounds` consecutive repair rounds that produced no new failure evidence.

    Without new evidence the reflector re-reads what it already had: resampling, not repair.
    """

    rounds: int = 2
    name: str = "no_new_evidence"

    def __call__(self, history: History) -> StopRecord | None:
        fresh = new_evidence(history.steps)
        repair_rounds = sorted(r for r in fresh if r > 0)
        if len(repair_rounds) < self.rounds:
            return None
        last = repair_rounds[-self.rounds :]
        if any(fresh[r] for r in last):
            return None
        why = f"rounds {last[0]}..{last[-1]} brought no new failure evidence ({self.rounds} in a row)"
        return _stop(Stop.REPORT_UNKNOWNS, self.name, why)


def new_evidence(steps: Iterable[Step]) -> dict[int, int]:
    """Per round, how many failure-evidence keys (per case) were never seen in earlier rounds."""
    return _fresh(steps, lambda s: {(s.case, k) for k in s.failures})


@dataclass(frozen=True)
class Stalled:
    """Stop after `rounds` consecutive rounds that kept no state (per case) not reached before:
    a frontier search's guard (seed 002's `max_stalled`): nothing new is left to expand."""

    rounds: int = 2
    name: str = "stalled"

    def __call__(self, history: History) -> StopRecord | None:
        fresh = _fresh(history.steps, lambda s: {(s.case, s.state)} if s.kept else set())
        later = sorted(r for r in fresh if r > 0)
        if len(later) < self.rounds or any(fresh[r] for r in later[-self.rounds :]):
            return None
        last = later[-self.rounds :]
        why = f"rounds {last[0]}..{last[-1]} kept no new state ({self.rounds} in a row)"
        return _stop(Stop.REPORT_UNKNOWNS, self.name, why)


@dataclass(frozen=True)
class Oscillation:
    """Stop when a test flips between two kept candidate states: A passes, B fails, A again.

    Detected on state digests of the candidates the loop actually held (rolled-back
    proposals change nothing): a state that comes back after a different state, with some
    test's outcome differing between them. The fix is upstream (requirements, state
    model), so the outcome is escalate.
    """

    name: str = "oscillation"

    def __call__(self, history: History) -> StopRecord | None:
        by_case: dict[str, list[Step]] = defaultdict(list)
        for s in sorted((s for s in history.steps if s.kept), key=lambda s: (s.case, s.round)):
            trail = by_case[s.case]
            if not trail or trail[-1].state != s.state:  # staying put is not a flip
                trail.append(s)
        for case, trail in by_case.items():
            first: dict[str, int] = {}
            for k, step in enumerate(trail):
                i = first.setdefault(step.state, k)
                if i == k:
                    continue
                for mid in trail[i + 1 : k]:
                    flipped = sorted(t for t, o in step.outcomes.items() if mid.outcomes.get(t, o) != o)
                    if flipped:
                        why = (
                            f"test {flipped[0]} flips between states {step.state[:8]} "
                            f"({step.outcomes[flipped[0]]}) and {mid.state[:8]} ({mid.outcomes[flipped[0]]}), "
                            f"back at round {step.round}: go back to requirements and state modelling"
                        )
                        return _stop(Stop.ESCALATE, self.name, why, case)
        return None


@dataclass(frozen=True)
class UnstableValidator:
    """Stop when one candidate under one suite got different verdicts: re-runs or validators disagree.

    Acceptance is broken, not the candidate: fix acceptance first, then repair.
    """

    name: str = "unstable_validator"

    def __call__(self, history: History) -> StopRecord | None:
        groups: dict[tuple[str, str], list[Verification]] = defaultdict(list)
        for v in history.verifications:
            groups[(v.candidate, v.suite)].append(v)
        for (candidate, _suite), runs in groups.items():
            signatures = {v.signature for v in runs}
            if len(signatures) < 2:
                continue
            validators = {v.validator for v in runs}
            per_validator = defaultdict(set)
            for v in runs:
                per_validator[v.validator].add(v.signature)
            flaky = [k for k, sigs in per_validator.items() if len(sigs) > 1]
            if flaky:
                what = f"{len(runs)} runs of validator {flaky[0][:8]} gave {len(signatures)} different verdicts"
            else:
                what = f"{len(validators)} validators disagree"
            why = f"candidate {candidate[:8]}: {what}; fix acceptance first"
            return _stop(Stop.REPORT_UNKNOWNS, self.name, why, runs[0].case)
        return None


@dataclass(frozen=True)
class Cap:
    """Stop when spend so far reaches a cap on cost units, seconds or risk (None = no cap).

    Reaching a cap is not a failure to hide: report what is known and unknown, and escalate.
    """

    cost: float | None = None
    seconds: float | None = None
    risk: float | None = None
    name: str = "cap"

    def __call__(self, history: History) -> StopRecord | None:
        if not history.rounds:
            return None
        spent = {
            "cost": sum(r.cost for r in history.rounds),
            "seconds": sum(r.seconds for r in history.rounds),
            "risk": sum(r.risk for r in history.rounds),
        }
        for what, cap in (("cost", self.cost), ("seconds", self.seconds), ("risk", self.risk)):
            if cap is not None and spent[what] >= cap:
                why = f"{what} spent {spent[what]:.4g} reached the cap {cap:g} after round {history.rounds[-1].round}"
                return _stop(Stop.ESCALATE, self.name, why)
        return None

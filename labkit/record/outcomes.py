"""A run's outcome as the engine recorded it: its scores and its decisions, read in one place.

The engine writes one SCORE event per case per round (the held candidate, graded on the hidden
tests when the case has them) and one DECIDE event per case per round (keep, roll back, ...;
with every child's decision when a proposal offered several). Every reader of "who was right
after which round" or "what was kept" goes through `scores` and `decisions` here, or through
the engine run's accessors that call them; nobody else picks these events' detail apart
(tests/test_outcome_readers.py). The detail shapes are `ScoreDetail` and `DecideDetail` in
labkit.record.events.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from labkit.record.events import Event, Kind, Role

__all__ = ["ChildDecision", "Decided", "Score", "decisions", "is_decision", "is_score", "scores"]


@dataclass(frozen=True, kw_only=True)
class Score:
    """One case's held candidate graded after a round (round 0: the start)."""

    seq: int
    run_id: str
    round: int
    case: str
    candidate: str  # the digest of the candidate scored
    correct: bool  # hidden scoring when the case has hidden tests, else the visible verdict
    visible: bool  # the visible verdict of the same candidate
    state: str  # the named state held
    scored_on: str  # "hidden" | "visible"
    scored_suite: str  # the digest of the (hidden) suite it was run on; "" when scored on the visible verdict
    failing: tuple[str, ...]  # the tests of that suite that failed


@dataclass(frozen=True)
class ChildDecision:
    """The decision about one child of a proposal."""

    name: str
    decision: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class Decided:
    """One case's decision in a round."""

    seq: int
    run_id: str
    round: int
    case: str
    decision: str  # "keep", "roll back", "stop", ...
    reason: str
    rule: str
    candidate: str  # the digest of the candidate the decision is about
    proposal: str  # the named state held after the decision
    offered: str  # the child the decision is about ("" when none was offered)
    cause: str  # the hypothesis behind the child decided on
    children: tuple[ChildDecision, ...]  # every child's decision, as recorded (may be empty)

    @property
    def each(self) -> tuple[ChildDecision, ...]:
        """Every child's decision; a decision recorded without children is its own one child."""
        return self.children or (ChildDecision(self.offered or self.proposal, self.decision, self.reason),)


def is_score(event: Event) -> bool:
    """The scorer's SCORE (the budget records its charge for scoring under the same kind)."""
    return event.role == Role.SCORER and event.kind == Kind.SCORE


def is_decision(event: Event) -> bool:
    """The decision role's DECIDE (not a budget charge recorded under that kind)."""
    return event.role == Role.DECISION and event.kind == Kind.DECIDE


def _case(d: Mapping[str, Any]) -> str:
    return str(d.get("case", ""))


def scores(events: Iterable[Event], case: str | None = None) -> tuple[Score, ...]:
    """The SCORE events among `events` (of `case`, if given), in ledger order."""
    out = []
    for e in events:
        d = e.detail
        if not is_score(e) or (case is not None and _case(d) != case):
            continue
        evidence = e.evidence_value  # the hidden verdict's summary, when it was scored on one
        run_on = evidence if isinstance(evidence, dict) else {}
        out.append(
            Score(
                seq=e.seq,
                run_id=e.run_id,
                round=e.round,
                case=_case(d),
                candidate=str(d.get("candidate", "")),
                correct=bool(d["correct"]),
                visible=bool(d["visible"]),
                state=str(d.get("state", "")),
                scored_on=str(d.get("scored_on", "")),
                scored_suite=str(run_on.get("suite", "")),
                failing=tuple(str(t) for t in run_on.get("failing", ())),
            )
        )
    return tuple(out)


def decisions(events: Iterable[Event], case: str | None = None) -> tuple[Decided, ...]:
    """The DECIDE events among `events` (of `case`, if given), in ledger order."""
    out = []
    for e in events:
        d = e.detail
        if not is_decision(e) or (case is not None and _case(d) != case):
            continue
        children = tuple(
            ChildDecision(str(c.get("name", "")), str(c.get("decision", "")), str(c.get("reason", "")))
            for c in d.get("children") or ()
        )
        out.append(
            Decided(
                seq=e.seq,
                run_id=e.run_id,
                round=e.round,
                case=_case(d),
                decision=str(d.get("decision", "")),
                reason=str(d.get("reason", "")),
                rule=str(d.get("rule", "")),
                candidate=str(d.get("candidate", "")),
                proposal=str(d.get("proposal", "")),
                offered=str(d.get("offered", "")),
                cause=str(d.get("cause", "")),
                children=children,
            )
        )
    return tuple(out)

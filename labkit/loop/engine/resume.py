"""Where a recorded run left off, read back from its ledger events.

A round is complete for a case once it is decided, so a run killed mid-round resumes at
that round again. A run whose last stop was a decision (resolved, a rule, the round cap,
the budget) is finished: resuming it is a no-op that returns what was recorded. A stop
recorded for an interruption (an error escaped) is not an ending: the run continues.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from labkit.core.types import Candidate, Decision, Usage, Verdict
from labkit.grading.verdicts import verdict_from_json
from labkit.loop.engine.recorder import candidate_from_json
from labkit.loop.engine.stopping import Stop, StopRecord
from labkit.record.events import Kind, Role

if TYPE_CHECKING:
    from labkit.record.ledger import Event, Ledger

__all__ = ["INTERRUPTED", "Held", "Recorded", "read", "resume_point"]

INTERRUPTED = "interrupted"  # the rule of a stop recorded for an error: resumable


@dataclass(frozen=True, kw_only=True)
class Held:
    """One case as recorded: the candidate its last decided round kept, and that round."""

    candidate: Candidate
    verdict: Verdict
    round: int
    state: str
    scored: frozenset[int] = frozenset()  # rounds whose score event is recorded
    rejected: tuple[str, ...] = ()
    stop: StopRecord | None = None  # a per-case stop, if one was recorded


@dataclass(frozen=True)
class Recorded:
    cases: dict[str, Held] = field(default_factory=dict)
    stop: StopRecord | None = None  # the run's final stop, if it finished
    last_round: int = 0
    usage: Usage = field(default_factory=Usage)  # spent by the case events so far
    paid: frozenset[tuple[str, str, str]] = frozenset()  # (candidate, suite, validator) validated so far


def _record(e: Event) -> StopRecord:
    d = e.detail
    outcome = d.get("outcome") or Stop.REPORT_UNKNOWNS
    return StopRecord(
        Decision(d.get("decision", "stop")), d.get("reason", ""), d.get("rule", ""), Stop(outcome), d.get("case", "")
    )


def read(ledger: Ledger, run_id: str) -> Recorded | None:
    """The recorded state of `run_id`, or None for a run the ledger has never seen start."""
    events = ledger.events(run_id)
    starts: dict[str, Event] = {}
    decided: dict[str, Event] = {}
    verdicts: dict[tuple[str, str], Verdict] = {}
    scored: dict[str, set[int]] = defaultdict(set)
    rejected: dict[str, list[str]] = defaultdict(list)
    stops: dict[str, StopRecord] = {}
    usage = Usage()
    paid: set[tuple[str, str, str]] = set()
    run_stop: StopRecord | None = None
    for e in events:
        case = e.detail.get("case")
        if case is not None and e.role != Role.BUDGET:
            usage = usage + e.usage
        if e.kind == Kind.STOP and e.detail.get("run"):
            run_stop = None if e.detail.get("rule") == INTERRUPTED else _record(e)
        if case is None:
            continue
        if e.kind == Kind.VERIFY and isinstance(e.evidence_value, dict) and "verdict" in e.evidence_value:
            verdicts[(case, e.detail["candidate"])] = verdict_from_json(e.evidence_value["verdict"])
            suite = e.evidence_value["verdict"]["evidence"]["suite"]
            paid.add((e.detail["candidate"], suite, str(e.detail.get("validator", ""))))
        elif e.kind == Kind.STOP and not e.detail.get("run"):
            stops[case] = _record(e)
        elif e.kind == Kind.SCORE:
            scored[case].add(e.round)
        elif e.kind == Kind.GENERATE and e.role == Role.EXECUTOR and e.round == 0:
            starts.setdefault(case, e)
        elif e.kind == Kind.DECIDE:
            decided[case] = e
            if e.detail.get("decision") == Decision.ROLL_BACK.value and e.detail.get("cause"):
                rejected[case].append(e.detail["cause"])
    if not starts:
        return None
    held: dict[str, Held] = {}
    for case, first in starts.items():
        last = decided.get(case, first)
        cand = candidate_from_json(ledger.get(last.output_hash))
        verdict = verdicts.get((case, cand.digest))
        if verdict is None:  # killed before the start was validated: this case starts again
            continue
        state = last.detail.get("proposal") if last is not first else first.detail.get("state")
        held[case] = Held(
            candidate=cand,
            verdict=verdict,
            round=last.round if last is not first else 0,
            state=str(state or ""),
            scored=frozenset(scored[case]),
            rejected=tuple(rejected[case]),
            stop=stops.get(case),
        )
    last_round = max((h.round for h in held.values()), default=0)
    return Recorded(held, run_stop, last_round, usage, frozenset(paid))


def resume_point(ledger: Ledger, run_id: str) -> tuple[Candidate, int] | None:
    """The single-case view: the candidate kept by the last decided round, and that round."""
    rec = read(ledger, run_id)
    if rec is None or not rec.cases:
        return None
    h = next(iter(rec.cases.values()))
    return h.candidate, h.round

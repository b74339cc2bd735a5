"""What a case holds during a run, and how a run ends: the stop event, the winners, the result.

`Runner` (labkit.loop.engine.runner) keeps one `CaseState` per case. When the run ends,
`ending` says why (unless a rule or the budget already did), `confirm_winners` runs the
winner-plus-confirmation ending if the run asked for one, `record_stop` writes the run's
STOP event and `result` builds the `EngineRun` handed back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from labkit.core.errors import BudgetExhausted, LedgerError
from labkit.core.types import Candidate, Decision, DecisionRecord, Verdict
from labkit.loop.engine.decide import assess
from labkit.loop.engine.expand import Confirmation, Frontier, Node, Winner
from labkit.loop.engine.recorder import Payment, Recorder, candidate_json
from labkit.loop.engine.steps import detail_of
from labkit.loop.engine.stopping import StopRecord
from labkit.loop.engine.strategy import Strategy
from labkit.loop.engine.trace import EngineRun, Round, Task, Trace
from labkit.record.events import Kind, Role

if TYPE_CHECKING:
    from labkit.record.ledger import Ledger

__all__ = ["QUARANTINED", "CaseState", "confirm_winners", "ending", "record_stop", "result", "unit_end"]

QUARANTINED = ("integrity", "quarantine")  # stop rules after which nothing is confirmed


@dataclass(kw_only=True)
class CaseState:
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
    frontier: Frontier | None = None  # None: the case holds one state (expand="hold")
    depth: int = 0  # the held state's depth from the start
    path: tuple[str, ...] = ()  # the held state's route from the start (with a frontier)
    green: list[Node] = field(default_factory=list)  # kept states whose visible suite passes


def ending(cases: Sequence[CaseState], stop_at_green: bool, rounds: int) -> DecisionRecord:
    """Why a run that no rule and no budget stopped has ended."""
    if len(cases) == 1 and cases[0].stop is not None:
        return cases[0].stop
    if cases and all(c.stop is not None for c in cases):
        return DecisionRecord(Decision.STOP, "every case stopped", "all-stopped")
    if stop_at_green and cases and all(assess(c.verdict).decision is Decision.STOP for c in cases):
        return assess(cases[0].verdict)
    return DecisionRecord(Decision.STOP, f"round cap reached ({rounds}); report unknowns", "round-cap")


def confirm_winners(
    rec: Recorder, cases: Sequence[CaseState], confirmation: Confirmation, rnd: int
) -> dict[str, Winner]:
    """Each case's winner among its green states by the preregistered rule, confirmed once on
    its sealed final set, paid from the reserve. A case with no green state has no winner, nor
    has a quarantined one (an integrity alarm or an unresolved effect stopped it)."""
    winners: dict[str, Winner] = {}
    rule = confirmation.rule
    for c in cases:
        if not c.green or (c.stop is not None and c.stop.rule in QUARANTINED):
            continue
        node = min(c.green, key=lambda n: rule.key(n, c.start))
        pay = Payment.fixed(Kind.CONFIRM, confirmation.cost) if confirmation.cost else None
        confirmed: bool | None
        try:
            confirmed = rec.confirm(c.task, rnd, node.candidate, payment=pay)
            why = "the sealed final set passes" if confirmed else "the sealed final set fails"
        except BudgetExhausted as exc:
            confirmed, why = None, f"confirmation unfunded: {exc}"
        rec.log(
            c.task,
            rnd,
            Role.DECISION,
            Kind.CONFIRM,
            outputs=candidate_json(node.candidate),
            detail={
                "candidate": node.candidate.digest,
                "state": node.state,
                "rule": rule.name,
                "confirmed": confirmed,
                "reason": why,
                "green": len(c.green),
            },
        )
        winners[c.task.id] = Winner(c.task.id, node, rule.name, confirmed, why)
    return winners


def record_stop(
    rec: Recorder,
    tasks: Sequence[Task],
    cases: Mapping[str, CaseState],
    reached: int,
    stop: DecisionRecord,
    error: BaseException | None,
    winners: Mapping[str, Winner] | None = None,
) -> None:
    """The run's STOP event (a one-case run's says how its experimental unit ended; with the
    winner-plus-confirmation ending, `winners`, a success is a confirmed winner)."""
    record = stop if isinstance(stop, StopRecord) else StopRecord(stop.decision, stop.reason, stop.rule)
    single = tasks[0] if len(tasks) == 1 else None
    held = next(iter(cases.values()), None) if single else None
    try:
        rid = rec.run_id
        unit = unit_end(rec.ledger, rid, held.candidate.digest, record.rule, error is not None) if held else {}
        if single is not None and winners is not None:  # the unit succeeds only by a confirmed winner
            w = winners.get(single.id)
            ok = w is not None and w.confirmed is True
            unit = {
                "unit": rid,
                "status": "success" if ok else "incomplete",
                **({"confirmed": w.confirmed} if w else {}),
            }
        rec.log(
            single,
            reached,
            Role.DECISION,
            Kind.STOP,
            outputs=candidate_json(held.candidate) if held else None,
            detail={
                **detail_of(record),
                "outcome": str(record.outcome),
                "run": True,
                "candidate": held.candidate.digest if held else "",
                "error": f"{type(error).__name__}: {error}" if error else "",
                **unit,
            },
        )
    except LedgerError:
        if error is None:
            raise


def result(
    rec: Recorder,
    tasks: tuple[Task, ...],
    strategy: Strategy,
    cases: Mapping[str, CaseState],
    reached: int,
    stops: Sequence[StopRecord],
    stop: DecisionRecord,
    winners: Mapping[str, Winner],
) -> EngineRun:
    traces = {}
    for cid, c in cases.items():
        rolled = c.rounds and c.rounds[-1].kept.digest != c.candidate.digest
        traces[cid] = Trace(
            run_id=rec.run_id,
            suite=c.task.suite.digest,
            validator=rec.checker.id,
            reflector=strategy.name,
            simulated=strategy.simulated,
            start=c.start,
            start_verdict=c.start_verdict,
            rounds=tuple(c.rounds),
            stop=c.stop or stop,
            case=cid,
            final_state=c.state,
            held=c.candidate if rolled else None,
            held_verdict=c.verdict if rolled else None,
        )
    return EngineRun(
        run_id=rec.run_id,
        ledger=rec.ledger,
        tasks=tasks,
        traces=traces,
        rounds_run=reached,
        stops=tuple(stops),
        stop=stop,
        simulated=strategy.simulated,
        strategy=strategy.name,
        final={cid: c.state for cid, c in cases.items()},
        winners=dict(winners),
    )


def unit_end(ledger: Ledger, run_id: str, held: str, rule: str, error: bool) -> dict[str, Any]:
    """A one-task run is one experimental unit: its stop says how the unit ended, in the layer
    vocabulary (`StopDetail`: unit, status, confirmed) that `loop.layer_metrics` reads (and, for
    a run recorded before stops carried it, derives with this same function from the stop's
    candidate, rule and error). `held` is the held candidate's digest.

    status: "success" when the held candidate was scored correct (on the hidden tests where the
    task has them — a check its author never saw, so `confirmed`), else "incomplete" when the
    budget or an error ended the run, else "failed"."""
    score = next(
        (
            e.detail
            for e in reversed(ledger.events(run_id))
            if e.kind == Kind.SCORE and e.detail.get("candidate") == held
        ),
        None,
    )
    correct = bool(score and score.get("correct"))
    status = "success" if correct else "incomplete" if error or rule == "budget" else "failed"
    out: dict[str, Any] = {"unit": run_id, "status": status}
    if score is not None and score.get("scored_on") == "hidden":
        out["confirmed"] = correct
    return out

"""What the engine runs and what it hands back: tasks, rounds, traces, and a run's outcome.

A `Task` is one case as the engine sees it: a starting candidate, the visible (protected)
acceptance the loop judges by, and optionally hidden acceptance used only for scoring.
A `Trace` is one case's rounds; an `EngineRun` holds every case's trace and recomputes its
numbers (per round, per slice, flip matrix) from the ledger, never from what it kept aside.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from labkit.core.types import Candidate, Decision, DecisionRecord, PatchSize, Usage, Verdict
from labkit.loop.engine import accounting
from labkit.loop.engine.expand import Winner
from labkit.loop.engine.probe import Observation
from labkit.loop.engine.stopping import RoundStats, StopRecord
from labkit.loop.engine.strategy import Child, Proposal
from labkit.record import outcomes

if TYPE_CHECKING:
    import polars as pl

    from labkit.grading.acceptance import AcceptanceSuite
    from labkit.grading.checkset import CheckSet
    from labkit.record.ledger import Ledger
    from labkit.record.outcomes import Decided, Score

__all__ = ["Attempt", "EngineRun", "Round", "Task", "Trace"]


@dataclass(frozen=True, kw_only=True)
class Task:
    """One case: start, visible acceptance (judged), hidden acceptance (scored, never shown)."""

    id: str
    start: Candidate
    suite: AcceptanceSuite
    hidden: AcceptanceSuite | None = None
    slice: str = ""
    patch_cap: Mapping[str, int] = field(default_factory=dict)
    start_state: str = "start"  # the name of the starting state ("original" for repair cases)
    checks: CheckSet | None = None  # the visible checks with versions and severities (keep="severity")


@dataclass(frozen=True)
class Attempt:
    """One child of a proposal, as validated and decided."""

    child: Child
    patched: Candidate | None
    size: PatchSize | None
    retest: Verdict | None
    decision: DecisionRecord


@dataclass(frozen=True, kw_only=True)
class Round:
    """One pass through steps 2–6 for one case. `kept` is what enters the next round."""

    index: int
    candidate: Candidate
    verdict: Verdict
    reflection: Proposal
    observations: tuple[Observation, ...] = ()
    patched: Candidate | None = None
    patch_size: PatchSize | None = None
    retest: Verdict | None = None
    decision: DecisionRecord = DecisionRecord(Decision.INVESTIGATE, "")
    usage: Usage = field(default_factory=Usage)  # cumulative for the run, as settled so far
    case: str = ""
    attempts: tuple[Attempt, ...] = ()
    state: str = ""  # the named state held after this round

    @property
    def kept(self) -> Candidate:
        if self.decision.decision is Decision.KEEP and self.patched is not None:
            return self.patched
        return self.candidate

    @property
    def kept_verdict(self) -> Verdict:
        if self.decision.decision is Decision.KEEP and self.retest is not None:
            return self.retest
        return self.verdict


@dataclass(frozen=True, kw_only=True)
class Trace:
    run_id: str
    suite: str  # suite digest, fixed in step 1
    validator: str
    reflector: str  # the strategy's name
    simulated: bool
    start: Candidate
    start_verdict: Verdict
    rounds: tuple[Round, ...]
    stop: DecisionRecord
    case: str = ""
    final_state: str = ""
    held: Candidate | None = None  # set when a run-level roll back restored an earlier state
    held_verdict: Verdict | None = None

    @property
    def final(self) -> Candidate:
        if self.held is not None:
            return self.held
        return self.rounds[-1].kept if self.rounds else self.start

    @property
    def final_verdict(self) -> Verdict:
        if self.held_verdict is not None:
            return self.held_verdict
        return self.rounds[-1].kept_verdict if self.rounds else self.start_verdict


@dataclass(frozen=True, kw_only=True)
class EngineRun:
    """A run of the engine over one or more cases. Numbers are recomputed from the ledger."""

    run_id: str
    ledger: Ledger
    tasks: tuple[Task, ...]
    traces: Mapping[str, Trace]
    rounds_run: int
    stops: tuple[StopRecord, ...]  # rule stops: per-case ones, then (last, if any) the run's
    stop: DecisionRecord  # how the whole run ended (always set)
    simulated: bool
    strategy: str
    final: Mapping[str, str]  # case id -> named state held at the end (after any roll back)
    winners: Mapping[str, Winner] = field(default_factory=dict)  # the winner-plus-confirmation ending's

    @property
    def rule_stop(self) -> StopRecord | None:
        """The rule that stopped the whole run, if one did."""
        return next((s for s in self.stops if not s.case), None)

    def correctness(self, field: str = "correct") -> pl.DataFrame:
        """Per-case per-round correctness (hidden scoring where a case has it), from the ledger."""
        return accounting.from_ledger(self.ledger.frame(self.run_id), field=field)

    def scores(self, case: str | None = None) -> tuple[Score, ...]:
        """Every score of the run (of `case`, if given) in ledger order: who was right after which round."""
        return outcomes.scores(self.ledger.events(self.run_id), case)

    def decisions(self, case: str | None = None) -> tuple[Decided, ...]:
        """Every decision of the run (of `case`, if given) in ledger order: what was kept or rolled back."""
        return outcomes.decisions(self.ledger.events(self.run_id), case)

    def per_round(self, **kw: Any) -> pl.DataFrame:
        return accounting.per_round(self.correctness(), **kw)

    def per_slice(self, by: str = "slice", **kw: Any) -> pl.DataFrame:
        return accounting.per_slice(self.correctness(), by, **kw)

    def transitions(self) -> pl.DataFrame:
        return accounting.transitions(self.correctness())

    def events(self) -> pl.DataFrame:
        return self.ledger.frame(self.run_id)

    def round_stats(self) -> tuple[RoundStats, ...]:
        """Per-round counts as the stop rules read them."""
        return accounting.round_stats(self.correctness())

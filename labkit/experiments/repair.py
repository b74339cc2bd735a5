"""The multi-case repair experiment, on the one engine: many small code-repair cases, one ledger.

Each case (data/repair_cases/<id>/: a Case read by `labkit.grading.cases.load_case`, seen
through `labkit.experiments.repair_case.RepairCase`) is a buggy or already-correct module,
visible tests the repairer may see, hidden tests it never sees, and real patches: the correct
fix, plausible wrong ones, and tempting "improvements". The engine (`labkit.loop.engine.run`)
runs every case in lockstep rounds:

  repairer proposes a change  ->  the validator runs the visible tests on it (real pytest)
  -> keep or roll back (ΔF within the visible check set, no new protective failure)
  -> the hidden tests score the held state (for the accounting only; no prompt sees them)

The cases' metadata (slice, kinds and measured effects of the patches, the flaky and
oscillating ones) is the Case's own, read through `RepairCase`. This module keeps the
repairers — a *simulated* one that picks among each case's real patches with per-round fix
and break probabilities, and a model one — and the run. The patches, the validator and the
tests are real.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Literal

import polars as pl

from labkit.core.types import Usage
from labkit.experiments.ledger_run import LedgerRun
from labkit.experiments.repair_case import CASES_DIR, CasePatch, RepairCase, load_cases
from labkit.grading.cases import CaseError
from labkit.grading.verdicts import Checker, VerdictCache
from labkit.loop import engine
from labkit.loop.engine import accounting
from labkit.loop.engine.decide import Keep
from labkit.loop.engine.stopping import (
    Cap,
    History,
    MarginalNet,
    NoNewEvidence,
    Oscillation,
    Rule,
    UnstableValidator,
    Verification,
)
from labkit.loop.engine.strategy import Child, Proposal, Situation, Strategy
from labkit.loop.engine.trace import EngineRun
from labkit.loop.strategies.rewrite import Rewrite
from labkit.record.ledger import Ledger, new_run_id

__all__ = [
    "CASES_DIR", "DEFAULT_CASE_RULES", "DEFAULT_RULES", "CaseError", "CasePatch", "Checker",
    "ModelRepairer", "RepairCase", "RepairRun", "SimulatedRepairer", "VerdictCache", "label", "load_cases",
    "moves", "ready", "run", "stability", "warm",
]  # fmt: skip

# -- repairers (strategies) -------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class SimulatedRepairer:
    """A *simulated* repairer: it picks among each case's real patches, at random, per round.

    A case whose visible tests fail gets the correct fix with probability
    `fix * fix_decay**(round-1)`, else one of its wrong patches. A case whose visible tests
    pass is "improved" anyway with probability `breaks * break_growth**(round-1)`, using one
    of its tempting patches. Draws are seeded per (seed, case, round): the same case gets
    the same choices whichever other cases run with it. It reads only the visible verdict
    and the case's patch list (kinds and bases) — `run` binds the cases.
    """

    fix: float = 0.6
    fix_decay: float = 0.7
    breaks: float = 0.03
    break_growth: float = 2.0
    seed: int = 0
    name: str = "simulated repairer"
    simulated: bool = True
    cases: Mapping[str, RepairCase] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        for what in ("fix", "fix_decay", "breaks", "break_growth"):
            value = getattr(self, what)
            if not value >= 0:
                raise ValueError(f"SimulatedRepairer.{what} must be >= 0, got {value!r}")

    def bind(self, cases: Sequence[RepairCase]) -> SimulatedRepairer:
        return replace(self, cases={c.id: c for c in cases})

    def p_fix(self, round: int) -> float:
        return min(1.0, self.fix * self.fix_decay ** (round - 1))

    def p_break(self, round: int) -> float:
        return min(1.0, self.breaks * self.break_growth ** (round - 1))

    def propose(self, situation: Situation) -> Proposal:
        case = self.cases.get(situation.case)
        if case is None:
            raise CaseError(f"SimulatedRepairer knows no case {situation.case!r}: bind the cases first")
        rng = random.Random(f"{self.seed}:{case.id}:{situation.round}")
        u = rng.random()
        if not situation.verdict.resolved:
            wrong = [p for p in case.patches if p.kind == "wrong" and p.name != situation.state]
            fix = [p for p in case.patches if p.kind == "fix"]
            pick = (
                fix[0]
                if fix and (u < self.p_fix(situation.round) or not wrong)
                else (rng.choice(wrong) if wrong else None)
            )
        else:
            tempt = [p for p in case.patches if p.kind == "tempt" and p.base == situation.state]
            pick = rng.choice(tempt) if tempt and u < self.p_break(situation.round) else None
        if pick is None:
            return Proposal()
        # One nominal cost unit per simulated call, so cost caps have something to count.
        child = Child(target=case.candidate(pick.name), name=pick.name, source=pick.kind)
        return Proposal(children=(child,), usage=Usage(calls=1, cost_units=1.0), note=pick.description)


def ModelRepairer(model: str, max_tokens: int = 1024, temperature: float = 0.0, feedback: bool = True) -> Rewrite:
    """A model writes the new module from the code, the visible tests and their failures only."""
    return Rewrite(
        model=model, feedback=feedback, max_tokens=max_tokens, temperature=temperature, name="model repairer"
    )


@dataclass(frozen=True)
class _KnownStates:
    """Names a child that reaches one of its case's known states ("fix", …) by that name."""

    inner: Strategy
    cases: Mapping[str, RepairCase]

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def simulated(self) -> bool:
        return self.inner.simulated

    def propose(self, situation: Situation) -> Proposal:
        p = self.inner.propose(situation)
        known = {s.candidate.digest: n for n, s in self.cases[situation.case].states.items()}
        kids = tuple(
            replace(ch, name=known[ch.target.digest]) if ch.target is not None and ch.target.digest in known else ch
            for ch in p.children
        )
        return replace(p, children=kids, patch=None)


# -- the experiment -------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class RepairRun(EngineRun):
    """An engine run over repair cases: the cases themselves, and who moved with which patch."""

    cases: tuple[RepairCase, ...] = ()

    @property
    def repairer(self) -> str:
        return self.strategy

    def moves(self, round: int) -> pl.DataFrame:
        return moves(self, self.cases, round)


DEFAULT_RULES: tuple[Rule, ...] = (MarginalNet(), NoNewEvidence(), Cap())
DEFAULT_CASE_RULES: tuple[Rule, ...] = (Oscillation(), UnstableValidator())


def run(
    cases: Sequence[RepairCase],
    repairer: Strategy | SimulatedRepairer,
    *,
    rounds: int = 3,
    checker: Checker | None = None,
    ledger: Ledger | None = None,
    run_id: str | None = None,
    rules: Sequence[Rule] = DEFAULT_RULES,
    case_rules: Sequence[Rule] = DEFAULT_CASE_RULES,
    keep: Keep = "no_worse",
    observe: Literal["hidden", "visible"] = "hidden",
    recheck: int = 0,
    workers: int = 2,
    resume: bool = False,
    on_alarm: Literal["continue", "stop"] = "continue",
) -> RepairRun:
    """Every case through up to `rounds` repair rounds of the engine, recorded in `ledger`.

    Passing cases stay in play (the repairer may over-edit them); per-case rules (oscillation,
    unstable validator) may stop a case, run rules (marginal net, no new evidence, caps) the
    run — a stop whose outcome is roll back restores the previous round's states. `observe`
    says which accounting the run rules read: "hidden" (the lab's held-out scoring, as in the
    chapter) or "visible" (all a deployed loop could see — it cannot see what it breaks).
    """
    if isinstance(repairer, SimulatedRepairer):
        repairer = repairer.bind(cases)
    strategy = _KnownStates(repairer, {c.id: c for c in cases})
    out = engine.run(
        [c.task for c in cases],
        strategy,
        checker or Checker(),
        rounds=rounds,
        rules=rules,
        case_rules=case_rules,
        keep=keep,
        stop_at_green=False,
        observe=observe,
        recheck=recheck,
        ledger=ledger,
        run_id=run_id or new_run_id("repair"),
        validation_cost=0.0,
        workers=workers,
        resume=resume,
        on_alarm=on_alarm,
    )
    return RepairRun(**{f.name: getattr(out, f.name) for f in fields(out)}, cases=tuple(cases))


def ready(checker: Checker, case: RepairCase) -> bool:
    """True when every reachable state of `case` is cached on both suites (runs are instant)."""
    return checker.ready([(st.candidate, s) for st in case.states.values() for s in (case.visible, case.hidden)])


def warm(
    checker: Checker,
    cases: Sequence[RepairCase],
    workers: int = 2,
    on_progress: Callable[[int, int], None] | None = None,
) -> int:
    """Validate every reachable state of every case on both suites; returns new pytest runs."""
    jobs = [(st.candidate, s) for case in cases for st in case.states.values() for s in (case.visible, case.hidden)]
    return checker.warm(jobs, workers, on_progress)


def moves(result: LedgerRun, cases: Sequence[RepairCase], round: int) -> pl.DataFrame:
    """Who got fixed or broken in `round`, with the patch each case held after it."""
    moved = accounting.moved(result.correctness(), round)
    held = {c.id: "original" for c in cases}
    for d in result.decisions():
        if d.round <= round:
            held[d.case] = d.proposal
    by_id = {c.id: c for c in cases}
    rows = [
        (case, by_id[case].slice, move, held[case], _effect_of(by_id[case], held[case]))
        for move in ("fixed", "broken")
        for case in moved[move]
    ]
    schema = {"case": pl.Utf8, "slice": pl.Utf8, "move": pl.Utf8, "now holds": pl.Utf8, "effect": pl.Utf8}
    return pl.DataFrame(rows, schema=schema, orient="row")


def _effect_of(case: RepairCase, state: str) -> str:
    if state == "original":
        return "original (correct)" if case.initially_correct else "original (buggy)"
    if state.startswith("model:"):
        return "model-written"
    return case.patch(state).effect


def label(result: LedgerRun) -> str:
    """How to caption a run's numbers: simulated repairers say so."""
    kind = "simulated" if result.simulated else "model"
    said = kind in result.strategy.lower()  # "simulated repairer" needs no second "simulated"
    return f"{result.strategy} ({'' if said else kind + '; '}validator and tests real)"


def stability(
    checker: Checker, cases: Sequence[RepairCase], reruns: int = 2, flaky_reruns: int = 12
) -> list[dict[str, object]]:
    """Fix acceptance first: re-run each original uncached (a known-flaky case more often) and
    say per case whether the unstable-validator rule fires. Re-runs stop at the first disagreement."""
    rows: list[dict[str, object]] = []
    for case in cases:
        runs = checker.recheck(case.original, case.visible, flaky_reruns if case.flaky else reruns)
        history = History(verifications=tuple(Verification.of(v.evidence, case.id) for v in runs))
        fired = UnstableValidator()(history)
        rows.append({"case": case.id, "runs": len(runs), "verdict": fired.reason if fired else "stable"})
    return rows

"""Reflexion on the repair cases: success by trial with and without the episodic buffer, and
its two failure modes (sparse reward; an entrenched false belief, and the revision rule).

SIMULATED actor, real everything else: the actor (`SimActor`) picks among each case's real
patches (the fix and its wrong ones) with a stated prior; every pick is a real child that the
engine validates on the visible tests (real pytest, through the verdict cache) and keeps or
rolls back; hidden tests score the held state each round. What memory changes is only what
the actor reads: a reflection that names an error class rules its action out; a false belief
makes it retry; a struck belief rules the action out. Same trials (engine rounds) and one
simulated call per trial in every arm.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import polars as pl

from labkit.core.stats import Interval, bootstrap_mean
from labkit.experiments import repair
from labkit.experiments.memory.actors import ModelActor, SimActor
from labkit.experiments.memory.on_humaneval import HumanEvalCase, run_tasks
from labkit.grading.verdicts import Checker
from labkit.loop.strategies.memory.episodic import EpisodicBuffer, Reflexion, Signal, Truncation
from labkit.record.ledger import Ledger

__all__ = ["ARMS", "ModelActor", "ReflexionSetup", "Result", "SimActor", "cases", "compare", "real_model", "run_arm"]


def real_model(
    model: str = "labkit/smollm2", n_cases: int = 4, trials: int = 3, checker: Checker | None = None
) -> pl.DataFrame:
    """The no-memory and buffer arms with a real model on the first `n_cases` cases (slow on CPU)."""
    cs = cases()[:n_cases]
    checker = checker or Checker()
    frames = []
    for arm in ARMS[:2]:
        strategy = Reflexion(
            actor=ModelActor(model), checker=checker, buffer=EpisodicBuffer(budget=arm.budget) if arm.memory else None
        )
        ledger = Ledger()
        done = repair.run(
            cs,
            strategy,
            rounds=trials,
            checker=checker,
            ledger=ledger,
            rules=(),
            case_rules=(),
            run_id=f"reflexion-model-{arm.name}",
            workers=1,
        )
        rows = [
            {"arm": arm.name, "case": s.case, "trial": s.round, "correct": s.correct}
            for s in done.scores()
            if s.round >= 1
        ]
        frames.append(pl.DataFrame(rows).group_by("arm", "case", "trial").agg(pl.col("correct").last()))
    return pl.concat(frames).sort("arm", "case", "trial")


@dataclass(frozen=True, kw_only=True)
class ReflexionSetup:
    name: str
    memory: bool
    signal: Signal = "message"
    false_belief: bool = False  # the first reflection on each case recommends retrying what failed
    revise_after: int | None = None
    budget: int = 400
    truncate: Truncation = "newest"  # how the buffer is cut to `budget` (see loop.memory.episodic)
    ignored: bool = False  # control: the actor does not read the buffer (SimActor.ignores_memory)


ARMS: tuple[ReflexionSetup, ...] = (
    ReflexionSetup(name="no memory", memory=False),
    ReflexionSetup(name="buffer", memory=True),
    ReflexionSetup(name="buffer, sparse reward", memory=True, signal="sparse"),
    ReflexionSetup(name="buffer, false belief", memory=True, false_belief=True),
    ReflexionSetup(name="buffer, false belief + revision", memory=True, false_belief=True, revise_after=2),
    ReflexionSetup(name="buffer, 60-token budget", memory=True, budget=60),
)


def cases() -> tuple[repair.RepairCase, ...]:
    """The repair cases with a bug to fix, a fix and wrong patches (no flaky or oscillating ones)."""
    return tuple(c for c in repair.load_cases() if not c.initially_correct and not c.flaky and not c.oscillates)


def run_arm(
    arm: ReflexionSetup,
    cs: Sequence[repair.RepairCase] | Sequence[HumanEvalCase],
    checker: Checker,
    *,
    trials: int = 4,
    seed: int = 0,
    p_fix: float = 0.3,
    ledger: Ledger | None = None,
) -> tuple[pl.DataFrame, Reflexion]:
    """One arm, one seed, through the engine, on repair cases or HumanEval problems (`cs`).
    Returns (case, trial, correct) and the wrapper; a repair run records into `ledger` if given."""
    actor = SimActor(cases={c.id: c for c in cs}, p_fix=p_fix, seed=seed, ignores_memory=arm.ignored)
    first = set()

    def believe(case: str, trial: int, action: str) -> bool:
        if case in first:
            return False
        first.add(case)
        return True

    strategy = Reflexion(
        actor=actor,
        checker=checker,
        buffer=EpisodicBuffer(budget=arm.budget, truncate=arm.truncate) if arm.memory else None,
        signal=arm.signal,
        believe=believe if arm.false_belief else None,
        revise_after=arm.revise_after,
    )
    if cs and not isinstance(cs[0], repair.RepairCase):
        he = [c for c in cs if not isinstance(c, repair.RepairCase)]
        return run_tasks(strategy, he, checker, trials=trials, run_id=f"reflexion-{arm.name}-{seed}"), strategy
    ledger = ledger if ledger is not None else Ledger()
    rc = [c for c in cs if isinstance(c, repair.RepairCase)]
    done = repair.run(
        rc,
        strategy,
        rounds=trials,
        checker=checker,
        ledger=ledger,
        rules=(),
        case_rules=(),
        run_id=f"reflexion-{arm.name}-{seed}",
        workers=1,
    )
    rows = [{"case": s.case, "trial": s.round, "correct": s.correct} for s in done.scores() if s.round >= 1]
    return pl.DataFrame(rows).group_by("case", "trial").agg(pl.col("correct").last()).sort("case", "trial"), strategy


@dataclass(frozen=True)
class Result:
    """Success by trial per arm (share of cases hidden-correct after trial t), over seeds."""

    frame: pl.DataFrame  # arm, seed, case, trial, correct
    success: dict[tuple[str, int], Interval] = field(default_factory=dict)  # (arm, trial) -> interval

    def difference(self, a: str, b: str, trial: int) -> Interval:
        """Paired difference in success at `trial`, arm a minus arm b, over (seed, case) units."""
        at = self.frame.filter(pl.col("trial") == trial)
        pa = at.filter(pl.col("arm") == a).select("seed", "case", pl.col("correct").cast(pl.Float64).alias("a"))
        pb = at.filter(pl.col("arm") == b).select("seed", "case", pl.col("correct").cast(pl.Float64).alias("b"))
        both = pa.join(pb, on=["seed", "case"]).sort("seed", "case")  # a fixed order: the bootstrap draws depend on it
        return bootstrap_mean((both["a"] - both["b"]).to_numpy())

    def table(self) -> pl.DataFrame:
        return pl.DataFrame(
            [
                {"arm": a, "trial": t, "success": round(i.estimate, 3), "95% CI": f"{i.low:.3f}–{i.high:.3f}"}
                for (a, t), i in self.success.items()
            ]
        )


def compare(
    arms: Sequence[ReflexionSetup] = ARMS,
    seeds: Sequence[int] = tuple(range(12)),
    trials: int = 5,
    checker: Checker | None = None,
    p_fix: float = 0.3,
    among: Sequence[repair.RepairCase] | Sequence[HumanEvalCase] | None = None,
) -> Result:
    """Every arm on every seed at the same number of trials; intervals over (seed, case) units.
    `among`: the cases, repair or HumanEval (default: all of `cases()`)."""
    cs = among if among is not None else cases()
    checker = checker or Checker()
    frames = []
    for arm in arms:
        for seed in seeds:
            f, _ = run_arm(arm, cs, checker, trials=trials, seed=seed, p_fix=p_fix)
            frames.append(f.with_columns(pl.lit(arm.name).alias("arm"), pl.lit(seed).alias("seed")))
    frame = pl.concat(frames)
    success = {}
    for arm in arms:
        for t in range(1, trials + 1):
            vals = frame.filter((pl.col("arm") == arm.name) & (pl.col("trial") == t))["correct"].cast(pl.Float64)
            success[arm.name, t] = bootstrap_mean(vals.to_numpy())
    return Result(frame, success)

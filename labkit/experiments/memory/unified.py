"""Seed 001's unified loop measured on the repair cases (SIMULATED actor and critic; real
patches, real visible verdicts, hidden scoring): the external oracle converges and stores
only verified wins; self-critique (the actor cannot read the verdict; a critic scores its own
output with no access to the truth) degrades, and the no-progress guard cuts its rounds.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import polars as pl

from labkit.core.stats import Interval, bootstrap_mean
from labkit.experiments import repair
from labkit.experiments.memory.reflexion_repair import SimActor, cases
from labkit.grading.verdicts import Checker
from labkit.loop.engine.strategy import Situation
from labkit.loop.strategies.memory.agent import ReflectiveAgent, commit
from labkit.loop.strategies.memory.skills import SkillLibrary
from labkit.record.events import Kind
from labkit.record.ledger import Ledger

__all__ = ["ARMS", "Unified", "compare", "run_arm"]

ARMS = ("external oracle", "self-critique, no guard", "self-critique + guard")


def _critic(seed: int) -> Callable[[Situation], float]:
    """SIMULATED self-critique: a score of the agent's own output that does not see the truth."""

    def critique(s: Situation) -> float:
        return random.Random(f"critic:{seed}:{s.case}:{s.round}").random()

    return critique


def run_arm(
    arm: str, cs: Sequence[repair.RepairCase], checker: Checker, *, rounds: int = 5, seed: int = 0
) -> tuple[pl.DataFrame, ReflectiveAgent, Ledger, str]:
    blind = arm != "external oracle"
    actor = SimActor(cases={c.id: c for c in cs}, seed=seed, blind=blind)
    agent = ReflectiveAgent(
        actor=actor,
        checker=checker,
        oracle=None if blind else "external",
        critique=_critic(seed) if blind else None,
        guard=arm == "self-critique + guard",
    )
    ledger, run_id = Ledger(), f"unified-{arm}-{seed}"
    done = repair.run(
        cs, agent, rounds=rounds, checker=checker, ledger=ledger, rules=(), case_rules=(), run_id=run_id, workers=1
    )
    score = [{"case": s.case, "round": s.round, "correct": s.correct} for s in done.scores()]
    calls = [
        {"case": str(e.detail["case"]), "round": e.round}
        for e in ledger.events()
        if e.kind == Kind.REFLECT and int(e.detail.get("children", 0)) > 0
    ]
    f = pl.DataFrame(score).group_by("case", "round").agg(pl.col("correct").last())
    f = f.with_columns(pl.lit(len(calls)).alias("proposals"))
    return f, agent, ledger, run_id


@dataclass(frozen=True, kw_only=True)
class Unified:
    frame: pl.DataFrame  # arm, seed, case, round, correct, proposals
    final: dict[str, Interval]  # share hidden-correct at the last round
    proposals: dict[str, float]  # mean proposals (simulated calls) per seed
    stored: dict[str, int]  # skills committed in seed 0 (self-critique: refused -> 0)
    stored_hidden_correct: dict[str, int]  # of those, how many the hidden tests also pass
    start: float  # share hidden-correct at round 0

    def difference(self, a: str, b: str, round: int) -> Interval:
        """Paired difference in hidden-correct share at `round`, arm a minus arm b, over (seed, case)."""
        at = self.frame.filter(pl.col("round") == round)
        pa = at.filter(pl.col("arm") == a).select("seed", "case", pl.col("correct").cast(pl.Float64).alias("a"))
        pb = at.filter(pl.col("arm") == b).select("seed", "case", pl.col("correct").cast(pl.Float64).alias("b"))
        both = pa.join(pb, on=["seed", "case"])
        return bootstrap_mean((both["a"] - both["b"]).to_numpy())


def compare(
    seeds: Sequence[int] = tuple(range(8)),
    rounds: int = 5,
    checker: Checker | None = None,
    among: Sequence[repair.RepairCase] | None = None,
) -> Unified:
    from labkit.core.errors import MemoryRefused

    cs = tuple(among) if among is not None else cases()
    checker = checker or Checker()
    frames, stored, hidden_ok = [], {}, {}
    by_id = {c.id: c for c in cs}
    for arm in ARMS:
        for seed in seeds:
            f, agent, ledger, run_id = run_arm(arm, cs, checker, rounds=rounds, seed=seed)
            frames.append(f.with_columns(pl.lit(arm).alias("arm"), pl.lit(seed).alias("seed")))
            if seed == seeds[0]:
                try:
                    skills = commit(
                        agent,
                        ledger,
                        run_id,
                        {c.id: [s.candidate for s in c.states.values()] for c in cs},
                        SkillLibrary(),
                    )
                except MemoryRefused:
                    skills = []
                stored[arm] = len(skills)
                hidden_ok[arm] = sum(_hidden_ok(checker, by_id[s.name.removeprefix("repair_")], s.code) for s in skills)
    frame = pl.concat(frames)
    last = frame.filter(pl.col("round") == rounds)
    final = {a: bootstrap_mean(last.filter(pl.col("arm") == a)["correct"].cast(pl.Float64).to_numpy()) for a in ARMS}
    props = {
        a: _mean(frame.filter(pl.col("arm") == a).group_by("seed").agg(pl.col("proposals").first())["proposals"])
        for a in ARMS
    }
    start = _mean(frame.filter(pl.col("round") == 0)["correct"].cast(pl.Float64))
    return Unified(
        frame=frame, final=final, proposals=props, stored=stored, stored_hidden_correct=hidden_ok, start=start
    )


def _mean(col: pl.Series) -> float:
    return float(col.cast(pl.Float64).to_numpy().mean())


def _hidden_ok(checker: Checker, case: repair.RepairCase, code: str) -> bool:
    cand = case.original.with_files({**case.original.files, case.module: code})
    return checker.check(cand, case.hidden).verdict.resolved

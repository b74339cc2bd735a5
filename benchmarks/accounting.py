"""Bootstrap per-round accounting: labkit vs a plain-Python loop over resamples, same run.

    .venv/bin/python benchmarks/accounting.py [--cases 10000] [--rounds 10] [--resamples 1000]
                                              [--baseline-resamples 10] [--reps 3]

Makes a per-case per-round correctness frame (10,000 cases x 10 repair rounds plus round
0; a seeded Markov chain: wrong cases get fixed, right ones get broken, with cost and
seconds per case-round), then times the full accounting with 1,000 bootstrap resamples
over cases — per round: fixed, broken, net, cases correct, cumulative fixes, fix rate,
break rate, cost, each with a 95% percentile interval:

  labkit     labkit.loop.accounting.per_round: polars checks and reshaping, one (resamples x
             cases) count matrix from labkit.core.stats.resample_indices, one matrix product
  baseline   the straightforward way: per-case lists in Python, a Python loop over
             resamples, and per resample a loop over drawn cases and rounds

The baseline is too slow to run 1,000 resamples on a laptop-size budget, so it runs
--baseline-resamples of them and its time is scaled linearly to the full count (its cost
per resample is constant: the same n x rounds loop every time). Both compute the point
estimates on the full data and must agree; the output says what was measured and what
was scaled.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import numpy as np
import polars as pl

from labkit.loop import accounting


def make_frame(cases: int, rounds: int, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    state = rng.random(cases) < 0.5
    cols: dict[str, list[np.ndarray]] = {"case": [], "round": [], "correct": [], "cost": [], "seconds": []}
    ids = np.array([f"c{i:05d}" for i in range(cases)])
    for r in range(rounds + 1):
        if r:
            u = rng.random(cases)
            fix, brk = 0.35 * 0.6 ** (r - 1), 0.04 * 1.15 ** (r - 1)
            state = np.where(state, u >= brk, u < fix)
        cols["case"].append(ids)
        cols["round"].append(np.full(cases, r))
        cols["correct"].append(state.copy())
        cols["cost"].append(rng.uniform(0.5, 1.5, cases))
        cols["seconds"].append(rng.uniform(1.0, 3.0, cases))
    return pl.DataFrame({k: np.concatenate(v) for k, v in cols.items()})


# -- the straightforward way --------------------------------------------------------------------


def _stats(rows: list[tuple[list[bool], list[float]]], pick: list[int], rounds: int) -> list[list[float]]:
    """Per round r = 1..R: fixed, broken, net, correct, cumulative, fix rate, break rate, cost."""
    out, cumulative = [], 0
    for r in range(1, rounds + 1):
        fixed = broken = correct = wrong_before = right_before = 0
        cost = 0.0
        for i in pick:
            states, costs = rows[i]
            before, after = states[r - 1], states[r]
            if before:
                right_before += 1
                if not after:
                    broken += 1
            else:
                wrong_before += 1
                if after:
                    fixed += 1
            if after:
                correct += 1
            cost += costs[r]
        cumulative += fixed
        fix_rate = fixed / wrong_before if wrong_before else float("nan")
        break_rate = broken / right_before if right_before else float("nan")
        out.append([fixed, broken, fixed - broken, correct, cumulative, fix_rate, break_rate, cost])
    return out


def baseline(frame: pl.DataFrame, rounds: int, resamples: int, seed: int = 0) -> tuple[list[list[float]], list[list[tuple[float, float]]]]:
    by_case: dict[str, tuple[list[bool], list[float]]] = {}
    for case, _r, ok, cost in frame.sort("case", "round").select("case", "round", "correct", "cost").iter_rows():
        states, costs = by_case.setdefault(case, ([], []))
        states.append(ok)
        costs.append(cost)
    rows = list(by_case.values())
    n = len(rows)
    point = _stats(rows, list(range(n)), rounds)
    rng = random.Random(seed)
    draws = []
    for _ in range(resamples):  # the loop labkit avoids
        pick = [rng.randrange(n) for _ in range(n)]
        draws.append(_stats(rows, pick, rounds))
    intervals = []
    for r in range(rounds):
        per_metric = []
        for m in range(8):
            values = sorted(d[r][m] for d in draws if d[r][m] == d[r][m])
            lo = values[int(0.025 * (len(values) - 1))] if values else float("nan")
            hi = values[int(0.975 * (len(values) - 1))] if values else float("nan")
            per_metric.append((lo, hi))
        intervals.append(per_metric)
    return point, intervals


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--baseline-resamples", type=int, default=10)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()

    frame = make_frame(args.cases, args.rounds)
    print(f"{args.cases:,} cases x {args.rounds} rounds (+ round 0) = {frame.height:,} rows; {args.resamples:,} resamples")

    times = []
    for _ in range(args.reps):
        t0 = time.perf_counter()
        table = accounting.per_round(frame, resamples=args.resamples)
        times.append(time.perf_counter() - t0)
    ours = statistics.median(times)

    t0 = time.perf_counter()
    point, _ = baseline(frame, args.rounds, args.baseline_resamples)
    measured = time.perf_counter() - t0
    t0 = time.perf_counter()
    baseline(frame, args.rounds, 0)  # the fixed part: building rows and point estimates
    fixed_part = time.perf_counter() - t0
    per_resample = (measured - fixed_part) / max(1, args.baseline_resamples)
    scaled = fixed_part + per_resample * args.resamples

    rounds = table.filter(pl.col("round") > 0)
    cols = ["fixed", "broken", "net", "correct", "cumulative_fixed", "fix_rate", "break_rate", "cost"]
    for r, row in enumerate(point):
        for col, value in zip(cols, row, strict=True):
            mine = rounds[col][r]
            assert abs(float(mine) - value) <= 1e-6 * max(1.0, abs(value)), (r + 1, col, mine, value)
    print("point estimates: labkit and baseline agree on all 8 measures x", args.rounds, "rounds")
    print(f"labkit per_round (median of {args.reps}): {ours:.3f} s for {args.resamples:,} resamples")
    print(
        f"plain-Python loop: measured {measured:.2f} s for {args.baseline_resamples} resamples "
        f"({per_resample:.3f} s each, {fixed_part:.2f} s setup), scaled to {args.resamples:,}: {scaled:.1f} s"
    )
    print(f"ratio (baseline / labkit): {scaled / ours:,.0f}x")


if __name__ == "__main__":
    main()

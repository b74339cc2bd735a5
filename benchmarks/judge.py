"""Judge-bias analysis time for 100,000 judgments: labkit vs the straightforward way, same run.

    .venv/bin/python benchmarks/judge.py [--pairs 50000] [--resamples 100] [--reps 3]

Makes 50,000 writer-vs-baseline pairs (labkit.experiments.judging.pairs) and has the simulated judge (labelled
simulated; position, length and self-preference biases on) judge each in both orders:
100,000 judgments. Then times the full analysis — judgments to columns, position metrics
with the three scoring rules, verbosity share, self-preference, length-controlled win
rates — every figure with a bootstrap interval over the same number of resamples:

  labkit     labkit.experiments.judging.bias: outcome kinds + multinomial resampling; batched IRLS for the
             length-controlled fit
  baseline   a plain-Python pass over the judgments for each metric, and a Python loop
             over resamples (index resampling, recompute); the length-controlled fit
             in that loop builds labkit's one design (lengthctl.length_design) and
             solves it with a plain, unpenalised numpy Newton per resample (a pure-Python
             fit would be a straw man)

It checks both give the same point estimates, then prints medians over --reps and ratios.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Sequence

import numpy as np
from _common import figure, median_time

from labkit.core.stats import Interval
from labkit.experiments.judging import bias, lengthctl
from labkit.experiments.judging.judge import Swap
from labkit.experiments.judging.pairs import make_questions, writer_pairs
from labkit.experiments.judging.simjudge import SimulatedJudge

BASELINE = "writer/baseline"


def make_swaps(n_pairs: int) -> tuple[list[Swap], str]:
    qs = make_questions(n_pairs // 3 + 1, seed=0)
    pairs = writer_pairs(qs, seed=0)[:n_pairs]
    judge = SimulatedJudge(k=3.0, beta=0.6, phi=0.8, delta=0.5, name="writer/strong", seed=0)
    return judge.run(pairs), judge.name


# --- labkit ----------------------------------------------------------------------------------


def analyse_labkit(swaps: Sequence[Swap], resamples: int) -> dict[str, Interval]:
    t = bias.table(swaps)
    pos = bias.position(t, resamples=resamples)
    verb = bias.verbosity(t, resamples=resamples)
    own = bias.self_preference(t, resamples=resamples)
    lc = bias.length_controlled(t, BASELINE, resamples=resamples)
    out = dict(pos.rows())
    out.update(verbosity=verb.share, self_preference=own.share)
    for r in lc.rates:
        out[f"raw {r.model}"] = r.raw
        out[f"lc {r.model}"] = r.length_controlled
    return out


# --- the straightforward way -------------------------------------------------------------------

Row = tuple[int, int, int, int, int, str, str]  # w12, w21, label, len1, len2, model1, model2


def _rows(swaps: Sequence[Swap]) -> list[Row]:
    rows = []
    for s in swaps:
        w12, w21 = s.first.winner, s.second.winner
        rows.append(
            (
                -1 if w12 is None else w12,
                -1 if w21 is None else w21,
                -1 if s.pair.label is None else s.pair.label,
                len(s.pair.output_1),
                len(s.pair.output_2),
                s.pair.model_1,
                s.pair.model_2,
            )
        )
    return rows


def _score(w: int, side: int) -> float:
    return 1.0 if w == side else (0.5 if w == 0 else 0.0)


def _plain_metrics(rows: Sequence[Row], judge: str) -> dict[str, float]:
    valid = gold = cons = first = second = 0
    acc12 = acc21 = gfirst = gsecond = fast = llm = vote_ok = 0.0
    vsum = vn = osum = on = 0.0
    for w12, w21, g, l1, l2, m1, m2 in rows:
        if w12 < 0 or w21 < 0:
            continue
        valid += 1
        cons += w12 == w21
        first += w12 == 1 and w21 == 2
        second += w12 == 2 and w21 == 1
        if g >= 1:
            gold += 1
            acc12 += w12 == g
            acc21 += w21 == g
            gfirst += (w12 if g == 1 else w21) == g
            gsecond += (w21 if g == 1 else w12) == g
            fast += (w12 if w12 == w21 else 0) == g
            llm += ((w12 == g) + (w21 == g)) / 2
            vote = w12 if w12 == w21 else (w21 if w12 == 0 else (w12 if w21 == 0 else 0))
            vote_ok += vote == g
        if l1 != l2:
            longer = 1 if l1 > l2 else 2
            vsum += (_score(w12, longer) + _score(w21, longer)) / 2
            vn += 1
        if (m1 == judge) != (m2 == judge):
            mine = 1 if m1 == judge else 2
            osum += (_score(w12, mine) + _score(w21, mine)) / 2
            on += 1
    return {
        "consistency": cons / valid,
        "first": first / valid,
        "second": second / valid,
        "other": (valid - cons - first - second) / valid,
        "net_position": (first - second) / valid,
        "accuracy_12": acc12 / gold,
        "accuracy_21": acc21 / gold,
        "accuracy_gap": (acc12 - acc21) / gold,
        "gold_first": gfirst / gold,
        "gold_second": gsecond / gold,
        "gold_shift": (gfirst - gsecond) / gold,
        "fastchat": fast / gold,
        "llmbar": llm / gold,
        "judgebench": vote_ok / gold,
        "verbosity": vsum / vn,
        "self_preference": osum / on,
    }


def _newton(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Plain Newton-Raphson for the logistic likelihood (no penalty): the same maximum as labkit's fit."""
    theta = np.zeros(x.shape[1])
    for _ in range(60):
        mu = 1 / (1 + np.exp(-x @ theta))
        step = np.linalg.solve((x * (mu * (1 - mu))[:, None]).T @ x, x.T @ (y - mu))
        theta += np.clip(step, -5, 5)
        if np.abs(step).max() < 1e-10:
            break
    return theta


def _plain_lc(t: bias.SwapTable) -> dict[str, float]:
    design = lengthctl.length_design(t, BASELINE)  # labkit's one builder of this regression
    theta = _newton(design.x, design.y)
    out = {}
    for i, m in enumerate(design.columns[:-1]):
        out[f"raw {m}"] = float(design.y[design.x[:, i] == 1].mean())
        out[f"lc {m}"] = float(1 / (1 + np.exp(-theta[i])))
    return out


def analyse_baseline(swaps: Sequence[Swap], judge: str, resamples: int) -> dict[str, Interval]:
    rows = _rows(swaps)
    t = bias.table(swaps)  # same rows, as columns, for the length-controlled design
    point = _plain_metrics(rows, judge) | _plain_lc(t)
    rng = random.Random(0)
    n = len(rows)
    boots: list[dict[str, float]] = []
    for _ in range(resamples):
        idx = [rng.randrange(n) for _ in range(n)]
        boots.append(_plain_metrics([rows[i] for i in idx], judge) | _plain_lc(t.take(idx)))
    out = {}
    for key, est in point.items():  # percentile intervals, as labkit reports
        low, high = np.quantile([b[key] for b in boots], [0.025, 0.975])
        out[key] = Interval(est, float(low), float(high))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=50_000, help="pairs; judgments are twice this")
    ap.add_argument("--resamples", type=int, default=100, help="bootstrap resamples, same for both")
    ap.add_argument("--reps", type=int, default=3, help="timed repetitions of the labkit analysis")
    args = ap.parse_args()

    t0 = time.perf_counter()
    swaps, judge = make_swaps(args.pairs)
    print(
        f"{2 * len(swaps):,} judgments of {len(swaps):,} pairs by the simulated judge "
        f"(simulated; made in {time.perf_counter() - t0:.1f} s)"
    )

    t_lab, lab = median_time(lambda: analyse_labkit(swaps, args.resamples), args.reps)
    t_lab_default, _ = median_time(lambda: analyse_labkit(swaps, 1000), 1)
    t_base, base = median_time(lambda: analyse_baseline(swaps, judge, args.resamples), 1)

    worst = max(abs(lab[k].estimate - base[k].estimate) for k in base)
    assert set(lab) == set(base) and worst < 1e-6, f"point estimates differ by {worst}"
    print(f"point estimates agree (largest difference {worst:.1e}); intervals, labkit | baseline:")
    for key in ("consistency", "net_position", "verbosity", "raw writer/padded", "lc writer/padded"):
        print(f"  {key:18s} {lab[key]}  |  {base[key]}")
    print(f"\nfull analysis, {args.resamples} bootstrap resamples per figure:")
    print(f"  labkit    {t_lab:8.2f} s  (median of {args.reps})")
    print(f"  baseline  {t_base:8.2f} s  (plain Python metrics, Python loop over resamples)")
    print(f"  speed-up  {t_base / t_lab:8.1f} x")
    print(
        f"labkit at its default 1000 resamples: {t_lab_default:.2f} s "
        f"({t_lab_default / t_base:.2f} x the baseline's time at {args.resamples})"
    )
    figure(
        "judge-bias analysis, plain-Python baseline time / labkit time",
        t_base / t_lab,
        "none set (baseline is a Python loop, not numpy)",
        None,
        unit="x",
    )


if __name__ == "__main__":
    main()

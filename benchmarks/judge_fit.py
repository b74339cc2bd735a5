"""Bootstrap intervals of the judge fits: labkit's batched fit vs a reference library refitting per resample.

    .venv/bin/python benchmarks/judge_fit.py [--pairs 2000] [--resamples 200] [--reps 3]

The same work on both sides, same run: the simulated judge (labelled simulated; position,
length and self-preference biases on) judges `--pairs` pairs in both orders; then

  fit_judge           "chose slot 1" on [1, Δquality, tanh(Δlength), own], both orders of every pair
  length_controlled   writers against the baseline, shared φ (AlpacaEval-2 style)

each as a point fit plus `--resamples` bootstrap refits resampling pairs, percentile intervals.

  labkit     labkit.experiments.judging.bias: identical pairs merged into kinds, resamples as
             multinomial counts, all refits in one batched Newton solve per iteration
  reference  statsmodels Logit (Newton), refitted on each index resample of the pairs

It checks the point estimates agree to 1e-6 and prints medians over --reps and the ratio.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import statsmodels.api as sm
from _common import median_time

from labkit.core.stats import resample_indices
from labkit.experiments.judging import bias, lengthctl
from labkit.experiments.judging.logistic import Design
from labkit.experiments.judging.pairs import make_questions, writer_pairs
from labkit.experiments.judging.simjudge import SimulatedJudge, synthetic_pairs

BASELINE = "writer/baseline"


def reference(design: Design, resamples: int) -> tuple[np.ndarray, np.ndarray]:
    """statsmodels at the data and on each index resample of the units (pairs)."""

    def fit(rows: np.ndarray) -> np.ndarray:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a separated resample warns; labkit ridges those
            return np.asarray(
                sm.Logit(design.y[rows], design.x[rows]).fit(method="newton", tol=1e-10, maxiter=100, disp=0).params
            )

    n = int(design.unit.max()) + 1
    rows_of = [np.flatnonzero(design.unit == u) for u in range(n)]
    point = fit(np.arange(design.y.size))
    boot = np.array([fit(np.concatenate([rows_of[u] for u in idx])) for idx in resample_indices(n, resamples, seed=1)])
    return point, np.quantile(boot, [0.025, 0.975], axis=0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=2000)
    ap.add_argument("--resamples", type=int, default=200)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    r = args.resamples

    judge = SimulatedJudge(k=3.0, beta=0.5, phi=1.0, delta=0.4, seed=3)
    t_fit = bias.table(judge.run(synthetic_pairs(args.pairs, seed=3, own_share=0.3)))
    t_lc = bias.table(judge.run(writer_pairs(make_questions(args.pairs // 3 + 1, seed=3), seed=3)[: args.pairs]))
    print(
        f"{args.pairs:,} pairs per fit, judged in both orders by the simulated judge (simulated); "
        f"{r} bootstrap resamples on both sides\n"
    )

    def lab_fit() -> np.ndarray:
        f = bias.fit_judge(t_fit, resamples=r)
        return np.array([f.beta.estimate, f.k.estimate, f.phi.estimate, f.delta.estimate])  # type: ignore[union-attr]

    def lab_lc() -> np.ndarray:
        lc = bias.length_controlled(t_lc, BASELINE, resamples=r)
        return np.array(
            [np.log(w.length_controlled.estimate / (1 - w.length_controlled.estimate)) for w in lc.rates]
            + [lc.phi.estimate]
        )  # type: ignore[union-attr]

    cases = [
        ("fit_judge", lab_fit, bias.judge_design(t_fit)),
        ("length_controlled", lab_lc, lengthctl.length_design(t_lc, BASELINE)),
    ]
    for name, lab, design in cases:
        t_lab, ours = median_time(lab, args.reps)
        t_ref, (point, _) = median_time(lambda d=design: reference(d, r), 1)
        worst = float(np.abs(ours - point).max())
        assert worst < 1e-6, f"{name}: point estimates differ by {worst}"
        print(f"{name}: coefficients agree with statsmodels (largest difference {worst:.1e})")
        print(f"  labkit     {t_lab:8.3f} s  (median of {args.reps})")
        print(f"  reference  {t_ref:8.3f} s  (statsmodels refit per resample)")
        print(f"  speed-up   {t_ref / t_lab:8.1f} x\n")


if __name__ == "__main__":
    main()

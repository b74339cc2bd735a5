"""AlpacaEval's own length control: one penalised fit per model (`length_controlled(variant="alpacaeval")`).

For each model m against the baseline, over that model's pairs only:

    logit P(m preferred) = θ_m + φ_m·tanh(Δlen / sd_m)

with sd_m the sample SD of *that model's* length differences, and the penalty λ(|θ_m| + |φ_m|)
on the summed log-likelihood — AlpacaEval's "length_controlled_minimal" GLM, fitted there by
scikit-learn's LogisticRegressionCV (liblinear, L1, fit_intercept=False, 5 group folds, log-loss
scoring, Cs = logspace(−4, 4, 10)). Its length-controlled win rate is σ(θ_m): the length term
at zero. λ = 1/C. A large λ puts θ_m at exactly 0, a win rate of exactly 50%.

Compared with the shared fit in `bias.length_controlled`, φ_m is estimated from one model's
pairs (noisier) and the penalty pulls every θ_m toward 50%.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from labkit.core.stats import interval, resample_kind_counts
from labkit.experiments.judging.bias import (
    LengthControl,
    SwapTable,
    WinRate,
    length_controlled,
    table,
    versus,
)
from labkit.experiments.judging.logistic import (
    Array,
    fit_l1,
    fit_with_draws,
    log_loss,
    merge_units,
    sigmoid,
)
from labkit.experiments.judging.pairs import WRITERS, Pair, make_questions, writer_pairs
from labkit.experiments.judging.simjudge import SimulatedJudge

__all__ = ["C_GRID", "VariantError", "choose_l1", "length_free_rates", "model_design", "per_model", "simulator_check"]

C_GRID = np.logspace(-4, 4, 10)  # scikit-learn's LogisticRegressionCV default (Cs=10)
FOLDS = 5


def model_design(dlen: Array) -> tuple[Array, float]:
    """Columns [1, tanh(Δlen / sd)] for one model's pairs, and that model's own sd."""
    sd = float(dlen.std(ddof=1)) if dlen.size > 1 else 0.0
    xl = np.tanh(dlen / sd) if sd > 0 else np.zeros(dlen.size)
    return np.stack([np.ones(dlen.size), xl], axis=1), sd


def choose_l1(x: Array, y: Array, folds: int = FOLDS, grid: Array = C_GRID) -> float:
    """λ = 1/C for the C whose fit predicts held-out pairs best (summed log-loss over `folds`
    folds of pairs, pair i in fold i mod folds). Ties go to the smaller C — the stronger penalty —
    as in scikit-learn's argmax over the grid."""
    n = y.size
    if n < folds:
        raise ValueError(f"cross-validating the L1 penalty needs at least {folds} pairs, got {n}")
    fold = np.arange(n) % folds
    lams = 1.0 / np.asarray(grid, dtype=float)
    score = np.zeros(lams.size)
    for f in range(folds):
        train = (fold != f).astype(float)
        test = (fold == f).astype(float)
        theta = fit_l1(x, y, np.repeat(train[None, :], lams.size, axis=0), lams)  # every λ at once
        score -= log_loss(x, y, np.repeat(test[None, :], lams.size, axis=0), theta) / test.sum()
    return float(lams[int(np.argmax(score))])


def per_model(t: SwapTable, baseline: str, l1: float | Literal["cv"] = "cv", resamples: int = 1000,
              level: float = 0.95, seed: int | None = 0) -> LengthControl:
    """The per-model, optionally L1-penalised length control (see the module docstring).
    `l1="cv"` chooses λ per model by cross-validation; a number fixes it (0 = maximum likelihood).
    Intervals resample that model's pairs with λ held at its chosen value."""
    if l1 != "cv" and (not isinstance(l1, int | float) or l1 < 0):
        raise ValueError(f"l1 must be 'cv' or a penalty >= 0, got {l1!r}")
    v = versus(t, baseline)
    rates = []
    for i, name in enumerate(v.names):
        mine = v.model == i
        x, sd = model_design(v.dlen[mine])
        y = v.y[mine]
        lam = choose_l1(x, y) if l1 == "cv" else float(l1)
        units = merge_units(x, y, np.arange(y.size))
        draws = resample_kind_counts(units.counts, resamples, None if seed is None else seed + i)
        point, boot = fit_with_draws(units, draws, lam)
        raw_boot = (draws[:, units.rep] @ units.y) / y.size if draws.size else draws
        rates.append(WinRate(name, baseline, int(y.size), interval(float(y.mean()), raw_boot, level),
                             interval(float(sigmoid(point[0])), sigmoid(boot[:, 0]), level),
                             phi=interval(float(point[1]), boot[:, 1], level), length_sd=sd, l1=lam))
    return LengthControl(t.judge, t.simulated, v.n_unparseable, float("nan"), None, tuple(rates), "alpacaeval")



# --- which variant lands nearer the truth, on the simulated judge ------------------------------

@dataclass(frozen=True)
class VariantError:
    """Root-mean-square distance of each variant's LC win rates from the length-free win rate."""

    length_scale: float  # the simulated judge's length scale (characters)
    n_rates: int  # model × seed win rates compared
    shared: float
    alpacaeval: float


def length_free_rates(judge: SimulatedJudge, wp: Sequence[Pair], baseline: str) -> dict[str, float]:
    """The truth the LC win rate aims at: each writer's expected order-averaged win rate
    against `baseline` from the same judge with its length term removed (φ = 0)."""
    fair = replace(judge, phi=0.0)
    p12, p21 = fair.p_first_many(wp, "12"), fair.p_first_many(wp, "21")
    win = np.where(np.array([p.model_2 == baseline for p in wp]), (p12 + 1 - p21) / 2, (1 - p12 + p21) / 2)
    model = np.array([p.model_1 if p.model_2 == baseline else p.model_2 for p in wp], dtype=object)
    return {str(m): float(win[model == m].mean()) for m in sorted(set(model.tolist()))}


def simulator_check(length_scales: Sequence[float] = (100.0, 200.0, 400.0), seeds: Sequence[int] = (0, 1, 2, 3, 4),
                    n_questions: int = 800, k: float = 3.0, beta: float = 0.5, phi: float = 1.5) -> list[VariantError]:
    """Shared-φ vs AlpacaEval-style (per-model φ, L1 by cross-validation) length control against
    the known length-free win rates of the simulated judge, for each judge length scale.

    Caveat: the simulated judge has one φ for every writer — labkit's shared-φ assumption — so
    the shared fit is the correctly specified one here; the check says how much the per-model,
    penalised fit costs when that assumption holds, not which is right for a real judge."""
    out = []
    for scale in length_scales:
        err: dict[str, list[float]] = {"shared": [], "alpacaeval": []}
        for seed in seeds:
            wp = writer_pairs(make_questions(n_questions, seed=seed), seed=seed)
            judge = SimulatedJudge(k=k, beta=beta, phi=phi, length_scale=scale, seed=seed)
            base = WRITERS[0][0]
            truth = length_free_rates(judge, wp, base)
            t = table(judge.run(wp))
            for variant in ("shared", "alpacaeval"):
                lc = length_controlled(t, base, resamples=20, seed=seed, variant=variant)
                err[variant] += [r.length_controlled.estimate - truth[r.model] for r in lc.rates]
        out.append(VariantError(scale, len(err["shared"]), _rms(err["shared"]), _rms(err["alpacaeval"])))
    return out


def _rms(errors: list[float]) -> float:
    return float(np.sqrt(np.mean(np.square(errors))))

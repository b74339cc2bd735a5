"""Length-controlled win rates: labkit's shared-φ fit and AlpacaEval's own per-model, L1-penalised one.

`length_controlled(variant="shared" | "alpacaeval")`; the rest of this docstring is about the second.

For each model m against the baseline, over that model's pairs only:

    logit P(m preferred) = θ_m + φ_m·tanh(Δlen / sd_m)

with sd_m the sample SD of *that model's* length differences, and the penalty λ(|θ_m| + |φ_m|)
on the summed log-likelihood — AlpacaEval's "length_controlled_minimal" GLM, fitted there by
scikit-learn's LogisticRegressionCV (liblinear, L1, fit_intercept=False, 5 group folds, log-loss
scoring, Cs = logspace(−4, 4, 10)). Its length-controlled win rate is σ(θ_m): the length term
at zero. λ = 1/C. A large λ puts θ_m at exactly 0, a win rate of exactly 50%.

Compared with the shared fit, φ_m is estimated from one model's
pairs (noisier) and the penalty pulls every θ_m toward 50%.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
import numpy.typing as npt

from labkit.core.stats import Interval, interval, resample_kind_counts
from labkit.experiments.judging.logistic import (
    Array,
    Design,
    fit_l1,
    fit_with_draws,
    log_loss,
    merge_units,
    sigmoid,
)

if TYPE_CHECKING:
    from labkit.experiments.judging.swaps import SwapTable

__all__ = [
    "C_GRID",
    "LengthControl",
    "Variant",
    "Versus",
    "WinRate",
    "choose_l1",
    "length_controlled",
    "length_design",
    "model_design",
    "per_model",
    "versus",
]

IntArray = npt.NDArray[np.int64]


# --- the shared fit, and the switch between variants --------------------------------------------

Variant = Literal["shared", "alpacaeval"]


@dataclass(frozen=True, kw_only=True)
class WinRate:
    model: str
    baseline: str
    n_pairs: int
    raw: Interval  # order-averaged share of verdicts for the model (ties half)
    length_controlled: Interval  # σ(θ_model): the same with the length term set to zero
    phi: Interval | None = None  # this model's own length coefficient (variant "alpacaeval" only)
    length_sd: float | None = None  # ... the SD its length differences were divided by
    l1: float | None = None  # ... and the L1 strength λ used (0 = none)


@dataclass(frozen=True, kw_only=True)
class LengthControl:
    judge: str
    simulated: bool
    n_unparseable: int
    length_sd: float  # the standard deviation the length difference was divided by (characters; NaN per-model)
    phi: Interval | None  # the fitted shared length coefficient (None in the per-model variant)
    rates: tuple[WinRate, ...]
    variant: Variant = "shared"


@dataclass(frozen=True, eq=False)
class Versus:
    """Pairs of each model against the baseline: model index, order-averaged preference for
    the model (ties ½) and the length difference model − baseline (characters)."""

    names: tuple[str, ...]
    model: IntArray
    y: Array
    dlen: Array
    n_unparseable: int


def versus(t: SwapTable, baseline: str) -> Versus:
    vs = (t.model_1 == baseline) ^ (t.model_2 == baseline)
    sub = t.where(vs & t.valid)
    if sub.n == 0:
        raise ValueError(f"no parsed pairs against baseline {baseline!r}")
    side = np.where(sub.model_1 == baseline, 2, 1)
    model = np.where(side == 1, sub.model_1, sub.model_2)
    names = sorted(set(model.tolist()))
    m_idx = np.searchsorted(np.array(names, dtype=object), model).astype(np.int64)
    s12 = (sub.w12 == side) + 0.5 * (sub.w12 == 0)
    s21 = (sub.w21 == side) + 0.5 * (sub.w21 == 0)
    dlen = np.where(side == 1, sub.len_1 - sub.len_2, sub.len_2 - sub.len_1)
    return Versus(tuple(names), m_idx, ((s12 + s21) / 2).astype(float), dlen.astype(float), int((vs & ~t.valid).sum()))


def _tanh_sd(dlen: Array) -> tuple[Array, float]:
    sd = float(dlen.std(ddof=1)) if dlen.size > 1 else 0.0
    return (np.tanh(dlen / sd) if sd > 0 else np.zeros(dlen.size)), sd


def length_design(t: SwapTable, baseline: str) -> Design:
    """The shared-φ regression of `length_controlled`: one-hot model columns, then
    tanh(Δlength / pooled SD); one row per pair."""
    v = versus(t, baseline)
    xl, _ = _tanh_sd(v.dlen)
    onehot = (v.model[:, None] == np.arange(len(v.names))[None, :]).astype(float)
    return Design((*v.names, "phi"), np.concatenate([onehot, xl[:, None]], axis=1), v.y, np.arange(v.y.size))


def length_controlled(
    t: SwapTable,
    baseline: str,
    resamples: int = 1000,
    level: float = 0.95,
    seed: int | None = 0,
    variant: Variant = "shared",
    l1: float | Literal["cv"] = "cv",
) -> LengthControl:
    """AlpacaEval-2-style length-controlled win rates of every model against `baseline`.

    Two variants; both read the win rate as σ(θ_model), the length term set to zero, beside
    the raw win rate, and neither has AlpacaEval's instruction-difficulty term:

    - "shared" (default): one fit over all models,
      logit P(model preferred) = θ_model + φ·tanh(Δlen / sd), a single φ and sd the pooled
      sample SD of every model's length differences. Maximum likelihood, no penalty.
    - "alpacaeval": AlpacaEval's "length_controlled_minimal" GLM — a separate fit per model,
      logit P = θ_m + φ_m·tanh(Δlen / sd_m) with that model's own φ_m and own SD sd_m, and
      an L1 penalty λ(|θ_m| + |φ_m|) on the summed log-likelihood (λ = 1/C in scikit-learn's
      liblinear terms). `l1="cv"` chooses λ per model by 5-fold cross-validated log-loss over
      scikit-learn's default grid C ∈ logspace(−4, 4, 10), as AlpacaEval does; the penalty
      can snap θ_m to exactly 0, a win rate of exactly 50%. `l1=0` is the unpenalised fit.

    Δlen = len(model) − len(baseline) (AlpacaEval writes baseline − model; only φ's sign
    differs). The order-averaged preferences (ties ½) are fitted as fractional outcomes. sd
    is held fixed across bootstrap resamples (pairs are resampled; in the per-model variant
    within each model, λ held at its chosen value).
    """
    if variant == "alpacaeval":
        return per_model(t, baseline, l1, resamples, level, seed)
    if variant != "shared":
        raise ValueError(f"unknown length-control variant {variant!r}; choose 'shared' or 'alpacaeval'")
    v = versus(t, baseline)
    d = length_design(t, baseline)
    names = list(v.names)
    units = merge_units(d.x, d.y, d.unit)
    draws = resample_kind_counts(units.counts, resamples, seed)
    point, boot = fit_with_draws(units, draws)
    # raw win rates from the same resamples: weighted means of y per model
    oh = units.x[:, : len(names)]
    raw_point = (units.counts @ (oh * units.y[:, None])) / (units.counts @ oh)
    with np.errstate(invalid="ignore", divide="ignore"):
        raw_boot = (draws @ (oh * units.y[:, None])) / (draws @ oh)
    rates = tuple(
        WinRate(
            model=name,
            baseline=baseline,
            n_pairs=int((v.model == i).sum()),
            raw=interval(float(raw_point[i]), raw_boot[:, i], level),
            length_controlled=interval(float(sigmoid(point[i])), sigmoid(boot[:, i]), level),
        )
        for i, name in enumerate(names)
    )
    phi = interval(float(point[-1]), boot[:, -1], level)
    return LengthControl(
        judge=t.judge,
        simulated=t.simulated,
        n_unparseable=v.n_unparseable,
        length_sd=_tanh_sd(v.dlen)[1],
        phi=phi,
        rates=rates,
    )


# --- AlpacaEval's per-model fit -------------------------------------------------------------------

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


def per_model(
    t: SwapTable,
    baseline: str,
    l1: float | Literal["cv"] = "cv",
    resamples: int = 1000,
    level: float = 0.95,
    seed: int | None = 0,
) -> LengthControl:
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
        rates.append(
            WinRate(
                model=name,
                baseline=baseline,
                n_pairs=int(y.size),
                raw=interval(float(y.mean()), raw_boot, level),
                length_controlled=interval(float(sigmoid(point[0])), sigmoid(boot[:, 0]), level),
                phi=interval(float(point[1]), boot[:, 1], level),
                length_sd=sd,
                l1=lam,
            )
        )
    return LengthControl(
        judge=t.judge,
        simulated=t.simulated,
        n_unparseable=v.n_unparseable,
        length_sd=float("nan"),
        phi=None,
        rates=tuple(rates),
        variant="alpacaeval",
    )

"""Bootstrap confidence intervals, vectorised: one numpy draw per call, no Python loop per resample."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True)
class Interval:
    """A point estimate with a percentile-bootstrap interval."""

    estimate: float
    low: float
    high: float
    level: float = 0.95

    def __str__(self) -> str:
        return f"{self.estimate:.3f} [{self.low:.3f}, {self.high:.3f}]"


def resample_indices(n: int, resamples: int, seed: int | None = 0) -> npt.NDArray[np.intp]:
    """A (resamples, n) matrix of row indices drawn with replacement."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, n, size=(resamples, n))


def bootstrap_mean(
    values: npt.ArrayLike, resamples: int = 1000, level: float = 0.95, seed: int | None = 0
) -> Interval:
    """Mean of `values` (1-D, one entry per unit, e.g. per case) with a bootstrap interval."""
    x = np.asarray(values, dtype=float)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"bootstrap_mean needs a non-empty 1-D array, got shape {x.shape}")
    means = x[resample_indices(x.size, resamples, seed)].mean(axis=1)
    return _interval(float(x.mean()), means, level)


def bootstrap_columns(
    matrix: npt.ArrayLike, resamples: int = 1000, level: float = 0.95, seed: int | None = 0
) -> list[Interval]:
    """Column sums of an (units, k) matrix, each with an interval, resampling units (rows) jointly.

    Resampling whole rows keeps the columns' dependence: e.g. rows are cases, columns rounds.
    """
    m = np.asarray(matrix, dtype=float)
    if m.ndim != 2 or m.shape[0] == 0:
        raise ValueError(f"bootstrap_columns needs a non-empty 2-D array, got shape {m.shape}")
    idx = resample_indices(m.shape[0], resamples, seed)
    # sums[r, j] = sum over resampled rows of column j; one gather, one reduction.
    sums = m[idx].sum(axis=1)
    point = m.sum(axis=0)
    return [_interval(float(point[j]), sums[:, j], level) for j in range(m.shape[1])]


def _interval(estimate: float, draws: npt.NDArray[np.float64], level: float) -> Interval:
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(draws, [alpha, 1.0 - alpha])
    return Interval(estimate, float(low), float(high), level)

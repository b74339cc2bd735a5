"""The one bootstrap: resample units with replacement, vectorised (one numpy draw per call).

Every interval in labkit comes from here. A resample is described by how many times each
unit (or each kind of unit) was drawn, so a statistic that is a sum over units is a single
matrix product `counts @ values` for all resamples at once, with no Python loop per resample:

- `resample_counts(n, resamples, seed)`: units drawn one by one (a (resamples, n) count matrix);
- `resample_kind_counts(counts, resamples, seed)`: the same bootstrap when units come in kinds
  with multiplicities `counts` (e.g. pairs grouped by outcome): each resample's count of each
  kind is drawn directly as a multinomial, so the cost scales with the kinds, not the units;
- `percentile_bounds` / `interval`: the percentile interval of the draws (non-finite draws,
  e.g. a ratio with no denominator in some resample, are left out).
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]


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


def resample_counts(n: int, resamples: int, seed: int | None = 0) -> Floats:
    """(resamples, n): how often each of `n` units was drawn in each bootstrap resample.

    The same draws as `resample_indices` with the same seed, counted: `counts @ values` gives
    every resample's sums without materialising a (resamples, n, k) gather. With a seed the
    draws are a pure function of (n, resamples, seed), so they are made once and shared,
    read-only, by every interval over as many units (a page bootstraps many columns of the
    same units); `seed=None` draws afresh each time.
    """
    if seed is None:
        return _draw_counts(n, resamples, None)
    return _seeded_counts(n, resamples, seed)


@functools.lru_cache(maxsize=4)  # a (1000, 2000) matrix is 16 MB: keep only the last few shapes
def _seeded_counts(n: int, resamples: int, seed: int) -> Floats:
    counts = _draw_counts(n, resamples, seed)
    counts.flags.writeable = False
    return counts


def _draw_counts(n: int, resamples: int, seed: int | None) -> Floats:
    idx = resample_indices(n, resamples, seed)
    offsets = (np.arange(resamples, dtype=np.intp) * n)[:, None]
    counts = np.bincount((idx + offsets).ravel(), minlength=resamples * n)
    return counts.reshape(resamples, n).astype(np.float64)


def resample_kind_counts(counts: npt.ArrayLike, resamples: int, seed: int | None = 0) -> Floats:
    """(resamples, K): each kind's count in bootstrap resamples of units grouped into K kinds.

    `counts[k]` units are of kind k; resampling the units with replacement and counting kinds
    is a multinomial draw of sum(counts) over the kinds' shares, drawn here directly.
    """
    c = np.asarray(counts, dtype=np.float64)
    n = int(c.sum())
    if n == 0:
        return np.zeros((resamples, c.size))
    rng = np.random.default_rng(seed)
    return rng.multinomial(n, c / n, size=resamples).astype(np.float64)


def percentile_bounds(draws: npt.ArrayLike, level: float = 0.95) -> tuple[Floats, Floats]:
    """Per column of (resamples, ...) `draws`: the percentile interval over its finite draws.

    A column with no finite draw gets NaN bounds.
    """
    d = np.asarray(draws, dtype=np.float64)
    d = np.where(np.isfinite(d), d, np.nan)
    alpha = (1.0 - level) / 2.0
    with warnings.catch_warnings():  # an all-NaN column is NaN: fine, and said in the docstring
        warnings.simplefilter("ignore", RuntimeWarning)
        low, high = np.nanquantile(d, [alpha, 1.0 - alpha], axis=0)
    return low, high


def interval(estimate: float, draws: npt.ArrayLike, level: float = 0.95) -> Interval:
    """`estimate` with the percentile interval of its (1-D) draws; all NaN if nothing is finite."""
    low, high = percentile_bounds(draws, level)
    if not np.isfinite(estimate) or not np.isfinite(low):
        return Interval(float("nan"), float("nan"), float("nan"), level)
    return Interval(float(estimate), float(low), float(high), level)


def bootstrap_mean(values: npt.ArrayLike, resamples: int = 1000, level: float = 0.95, seed: int | None = 0) -> Interval:
    """Mean of `values` (1-D, one entry per unit, e.g. per case) with a bootstrap interval."""
    x = np.asarray(values, dtype=float)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"bootstrap_mean needs a non-empty 1-D array, got shape {x.shape}")
    means = (resample_counts(x.size, resamples, seed) @ x) / x.size
    return interval(float(x.mean()), means, level)


def bootstrap_columns(
    matrix: npt.ArrayLike, resamples: int = 1000, level: float = 0.95, seed: int | None = 0
) -> list[Interval]:
    """Column sums of an (units, k) matrix, each with an interval, resampling units (rows) jointly.

    Resampling whole rows keeps the columns' dependence: e.g. rows are cases, columns rounds.
    """
    m = np.asarray(matrix, dtype=float)
    if m.ndim != 2 or m.shape[0] == 0:
        raise ValueError(f"bootstrap_columns needs a non-empty 2-D array, got shape {m.shape}")
    sums = resample_counts(m.shape[0], resamples, seed) @ m
    point = m.sum(axis=0)
    return [interval(float(point[j]), sums[:, j], level) for j in range(m.shape[1])]

"""The one bootstrap (labkit.core.stats) gives the numbers the three copies it replaced gave.

The references below are the replaced code, verbatim in substance: stats' own index gather,
accounting's bincount of the same indices, bias's multinomial over kinds, and the two
percentile-interval helpers (np.quantile over finite draws; np.nanquantile per column).
"""

from __future__ import annotations

import numpy as np
import pytest

from labkit.core import stats
from labkit.experiments.judging import bias
from labkit.loop.engine import accounting


def _gather_sums(m: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    idx = np.random.default_rng(seed).integers(0, m.shape[0], size=(resamples, m.shape[0]))
    return m[idx].sum(axis=1)


def test_resample_counts_are_the_index_draws_counted() -> None:
    m = np.random.default_rng(1).integers(0, 3, size=(57, 4)).astype(float)
    counts = stats.resample_counts(57, 300, seed=7)
    assert counts.shape == (300, 57) and (counts.sum(axis=1) == 57).all()
    np.testing.assert_array_equal(counts @ m, _gather_sums(m, 300, 7))
    np.testing.assert_array_equal(accounting._resampled_sums(m, 300, 7), _gather_sums(m, 300, 7))


def test_seeded_draws_are_made_once_and_shared_read_only() -> None:
    """Intervals over the same units with the same seed reuse one draw (a page bootstraps many
    columns of the same 2000 tasks); nobody can change it under the others; unseeded draws stay fresh."""
    first, again = stats.resample_counts(61, 200, seed=5), stats.resample_counts(61, 200, seed=5)
    assert again is first and not first.flags.writeable
    with pytest.raises(ValueError):
        first[0, 0] = 99.0
    m = np.random.default_rng(4).integers(0, 2, size=(61, 2)).astype(float)
    np.testing.assert_array_equal(first @ m, _gather_sums(m, 200, 5))  # still the same draws
    assert stats.resample_counts(61, 200, seed=None) is not stats.resample_counts(61, 200, seed=None)


def test_bootstrap_columns_and_mean_match_the_gather() -> None:
    m = np.random.default_rng(2).integers(0, 2, size=(40, 3)).astype(float)
    sums = _gather_sums(m, 500, 3)
    for j, iv in enumerate(stats.bootstrap_columns(m, 500, seed=3)):
        low, high = np.quantile(sums[:, j], [0.025, 0.975])
        assert (iv.estimate, iv.low, iv.high) == (m[:, j].sum(), low, high)
    x = m[:, 0]
    means = _gather_sums(x[:, None], 500, 3)[:, 0] / x.size
    iv = stats.bootstrap_mean(x, 500, seed=3)
    assert (iv.low, iv.high) == tuple(np.quantile(means, [0.025, 0.975]))


def test_kind_counts_are_bias_multinomial_draws() -> None:
    counts = np.array([5.0, 0.0, 12.0, 3.0])
    ref = np.random.default_rng(9).multinomial(20, counts / 20, size=200).astype(float)
    np.testing.assert_array_equal(stats.resample_kind_counts(counts, 200, seed=9), ref)
    assert (stats.resample_kind_counts(np.zeros(3), 5) == 0).all()


def test_kind_counts_are_the_same_bootstrap_as_unit_counts() -> None:
    """Multinomial over kinds and units-then-count-kinds: same distribution (means, spread)."""
    kinds = np.repeat(np.arange(3), [10, 30, 60])
    by_units = stats.resample_counts(kinds.size, 20000, seed=1) @ np.eye(3)[kinds]
    by_kinds = stats.resample_kind_counts(np.bincount(kinds), 20000, seed=2)
    np.testing.assert_allclose(by_units.mean(axis=0), by_kinds.mean(axis=0), rtol=0.02)
    np.testing.assert_allclose(by_units.std(axis=0), by_kinds.std(axis=0), rtol=0.05)


def test_intervals_leave_out_non_finite_draws_like_both_old_helpers() -> None:
    draws = np.array([[1.0, np.nan], [np.inf, np.nan], [3.0, np.nan], [2.0, np.nan], [0.5, np.nan]])
    low, high = stats.percentile_bounds(draws, 0.9)
    finite = np.array([1.0, 3.0, 2.0, 0.5])
    assert (low[0], high[0]) == tuple(np.quantile(finite, [0.05, 0.95]))
    assert np.isnan(low[1]) and np.isnan(high[1])
    assert stats.interval(2.0, draws[:, 0], 0.9) == stats.Interval(2.0, low[0], high[0], 0.9)
    assert np.isnan(stats.interval(2.0, draws[:, 1]).estimate)
    assert np.isnan(stats.interval(float("nan"), draws[:, 0]).low)


def test_bias_position_numbers_are_the_multinomial_bootstrap() -> None:
    """bias.position's interval for one metric, recomputed by hand from the reference draws."""
    keys = np.array([0, 0, 1, 2, 2, 2, 3, 1, 0, 2])
    num, den = bias._position_tables()
    counts = np.bincount(keys, minlength=num.shape[0]).astype(float)
    ref = np.random.default_rng(4).multinomial(10, counts / 10, size=400).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        boot = (ref @ num) / (ref @ den)
    got = bias._bootstrap_ratios(keys, num, den, 400, 0.95, 4)
    for j, iv in enumerate(got):
        finite = boot[:, j][np.isfinite(boot[:, j])]
        if finite.size:
            assert (iv.low, iv.high) == pytest.approx(tuple(np.quantile(finite, [0.025, 0.975])))

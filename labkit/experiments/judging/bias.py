"""Judge-bias metrics over pairs judged in both orders, every figure with a bootstrap interval.

Position: consistency (same output chosen in both orders), biased-to-first / -second
(the first / second slot chosen in both orders), accuracy in each order, and the three
scoring rules side by side: inconsistent-as-tie (FastChat), the average of both orders
(LLMBar), both-orders vote (JudgeBench). Inconsistency is not position bias: a judge that
is merely unsure flips on close pairs in both directions equally; position bias is the
asymmetry first − second.

Verbosity and self-preference: the share of (order-averaged) verdicts for the longer /
the judge's own output. Length control in the manner of AlpacaEval 2 (`lengthctl`): a
logistic model of the preference with a per-model term and φ·tanh(standardised length
difference), read off with the length term set to zero. `fit_judge` recovers the simulated judge's
parameters (skill k, position β, length φ, self δ) by logistic regression on the slot
chosen.

The unit of resampling is the pair. Pairs fall into a few kinds of outcome, so a
bootstrap resample is a multinomial draw over the distinct kinds: the same distribution
as resampling pair indices, at a cost that does not grow with the number of pairs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Literal

import numpy as np

from labkit.core.stats import Interval, interval, resample_kind_counts
from labkit.experiments.judging.judge import Swap, length_feature
from labkit.experiments.judging.lengthctl import LengthControl, length_controlled
from labkit.experiments.judging.logistic import Design
from labkit.experiments.judging.logistic import fit_with_draws as _fit_with_draws
from labkit.experiments.judging.logistic import merge_units as _merge_units
from labkit.experiments.judging.logistic import sigmoid as _sigmoid
from labkit.experiments.judging.swaps import Array, IntArray, SwapTable, table

Unparseable = Literal["leave_out", "wrong"]  # what `position` does with a reply that gave no verdict


# --- the bootstrap over kinds of pair --------------------------------------------------------


def _bootstrap_ratios(
    keys: IntArray, num: Array, den: Array, resamples: int, level: float, seed: int | None
) -> list[Interval]:
    """Ratios  Σ num[key] / Σ den[key]  over pairs, each with a percentile-bootstrap interval.

    `keys` gives each pair's outcome kind (0..K−1); `num` and `den` are (K, m) tables, one
    column per metric. Resamples are multinomial draws of kind counts, shared by all metrics.
    `resamples=0`: the point estimates alone, bounds NaN (for a table that shows no interval).
    """
    counts = np.bincount(keys, minlength=num.shape[0]).astype(float)
    if resamples == 0:
        with np.errstate(invalid="ignore", divide="ignore"):
            point = (counts @ num) / (counts @ den)
        return [Interval(float(p), float("nan"), float("nan"), level) for p in point]
    draws = resample_kind_counts(counts, resamples, seed)
    with np.errstate(invalid="ignore", divide="ignore"):
        point = (counts @ num) / (counts @ den)
        boot = (draws @ num) / (draws @ den)
    return [interval(float(point[j]), boot[:, j], level) for j in range(num.shape[1])]


# --- position --------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class PositionReport:
    """Position-bias metrics over pairs judged in both orders (shares of parsed pairs)."""

    judge: str
    simulated: bool
    n_pairs: int
    n_unparseable: int  # pairs with at least one reply that gave no verdict (left out below, unless counted wrong)
    n_scored: int  # pairs with a gold winner that accuracy is over (parsed ones, unless unparseable="wrong")
    consistency: Interval  # same output chosen in both orders
    first: Interval  # slot A chosen in both orders
    second: Interval  # slot B chosen in both orders
    other: Interval  # inconsistent with a tie on one side
    net_position: Interval  # first − second: the position bias itself
    accuracy_12: Interval  # accuracy with output_1 shown first
    accuracy_21: Interval  # ... and shown second
    accuracy_gap: Interval  # accuracy_12 − accuracy_21
    gold_first: Interval  # accuracy in the order that shows the better output as A
    gold_second: Interval  # ... and as B
    gold_shift: Interval  # gold_first − gold_second: what swapping the order does to accuracy
    fastchat: Interval  # inconsistent -> tie, then exact match with gold
    llmbar: Interval  # mean accuracy of the two orders
    judgebench: Interval  # vote of both orders: agree -> that; one tie -> the other; 1 vs 2 -> tie

    def rows(self) -> list[tuple[str, Interval]]:
        return [(name, getattr(self, name)) for name in _POSITION_METRICS]


_POSITION_METRICS = (
    "consistency",
    "first",
    "second",
    "other",
    "net_position",
    "accuracy_12",
    "accuracy_21",
    "accuracy_gap",
    "gold_first",
    "gold_second",
    "gold_shift",
    "fastchat",
    "llmbar",
    "judgebench",
)


def _position_tables(unparseable: Unparseable = "leave_out") -> tuple[Array, Array]:
    """Numerators and denominators of every position metric for each of the 64 pair kinds
    (w12, w21, label each in −1..2). `unparseable` as in `position`."""
    key = np.arange(64)
    a, b, g = key // 16 - 1, (key // 4) % 4 - 1, key % 4 - 1
    valid = (a >= 0) & (b >= 0) if unparseable == "leave_out" else np.ones(64, dtype=bool)
    gold = valid & (g >= 1)
    first = valid & (a == 1) & (b == 2)  # output 1 when it was in slot A, output 2 when it was
    second = valid & (a == 2) & (b == 1)
    consistent = valid & (a == b)
    other = valid & ~consistent & ~first & ~second
    fastchat = np.where(a == b, a, 0)
    vote = np.where(a == b, a, np.where(a == 0, b, np.where(b == 0, a, 0)))
    ok_a, ok_b = (a == g).astype(float), (b == g).astype(float)
    # order 12 shows output 1 as A: the gold output is shown first there iff it is output 1
    ok_first, ok_second = np.where(g == 1, ok_a, ok_b), np.where(g == 1, ok_b, ok_a)
    columns = {
        "consistency": (consistent, valid),
        "first": (first, valid),
        "second": (second, valid),
        "other": (other, valid),
        "net_position": (first.astype(float) - second, valid),
        "accuracy_12": (gold * ok_a, gold),
        "accuracy_21": (gold * ok_b, gold),
        "accuracy_gap": (gold * (ok_a - ok_b), gold),
        "gold_first": (gold * ok_first, gold),
        "gold_second": (gold * ok_second, gold),
        "gold_shift": (gold * (ok_first - ok_second), gold),
        "fastchat": (gold & (fastchat == g), gold),
        "llmbar": (gold * (ok_a + ok_b) / 2, gold),
        "judgebench": (gold & (vote == g), gold),
    }
    num = np.stack([columns[m][0] for m in _POSITION_METRICS], axis=1).astype(float)
    den = np.stack([columns[m][1] for m in _POSITION_METRICS], axis=1).astype(float)
    return num, den


_POSITION_TABLES = {rule: _position_tables(rule) for rule in ("leave_out", "wrong")}


def position(
    t: SwapTable,
    resamples: int = 1000,
    level: float = 0.95,
    seed: int | None = 0,
    unparseable: Unparseable = "leave_out",
) -> PositionReport:
    """Position-bias metrics with intervals.

    `unparseable="leave_out"` (labkit's rule): a pair with a reply that gave no verdict is counted
    in `n_unparseable` and left out of every share. `"wrong"` (LLMBar's evaluate.py): every pair
    stays in every denominator, a missing verdict is never correct, and two missing verdicts count
    as the same verdict in both orders (its `equal` compares the raw winners, None == None).
    `resamples=0` gives the point estimates only (NaN bounds), for tables that show no interval."""
    keys = (t.w12 + 1) * 16 + (t.w21 + 1) * 4 + (t.label + 1)
    num, den = _POSITION_TABLES[unparseable]
    iv = _bootstrap_ratios(keys, num, den, resamples, level, seed)
    valid = t.valid if unparseable == "leave_out" else np.ones(t.n, dtype=bool)
    names = [f.name for f in fields(PositionReport)][5:]  # the intervals, in the table's order
    return PositionReport(
        judge=t.judge,
        simulated=t.simulated,
        n_pairs=t.n,
        n_unparseable=int((~t.valid).sum()),
        n_scored=int((valid & (t.label >= 1)).sum()),
        **dict(zip(names, iv, strict=True)),
    )


# --- a designated side: the longer output, the judge's own output, a model vs a baseline ------


@dataclass(frozen=True, kw_only=True)
class SideReport:
    """How often the judge chose a designated output (ties count half), order-averaged and
    split by the slot the designated output was shown in. 0.5 = no preference."""

    what: str
    judge: str
    simulated: bool
    n_pairs: int
    n_unparseable: int
    share: Interval
    shown_first: Interval
    shown_second: Interval


def _side_share(t: SwapTable, side: IntArray, what: str, resamples: int, level: float, seed: int | None) -> SideReport:
    use = side >= 1
    sub = t.where(use)
    s = side[use]
    keys = (sub.w12 + 1) * 16 + (sub.w21 + 1) * 4 + s  # s in 1..2
    key = np.arange(64)
    a, b, d = key // 16 - 1, (key // 4) % 4 - 1, key % 4
    valid = (a >= 0) & (b >= 0) & (d >= 1)
    s12 = (a == d) + 0.5 * (a == 0)
    s21 = (b == d) + 0.5 * (b == 0)
    # in order 12 the designated output d is shown first iff d == 1
    num = np.stack(
        [valid * (s12 + s21) / 2, valid * np.where(d == 1, s12, s21), valid * np.where(d == 1, s21, s12)], axis=1
    )
    den = np.stack([valid] * 3, axis=1).astype(float)
    iv = _bootstrap_ratios(keys, num, den, resamples, level, seed)
    share, shown_first, shown_second = iv
    return SideReport(
        what=what,
        judge=t.judge,
        simulated=t.simulated,
        n_pairs=sub.n,
        n_unparseable=int((~sub.valid).sum()),
        share=share,
        shown_first=shown_first,
        shown_second=shown_second,
    )


def verbosity(t: SwapTable, resamples: int = 1000, level: float = 0.95, seed: int | None = 0) -> SideReport:
    """Share of verdicts for the longer output (pairs of equal length are left out)."""
    side = np.where(t.len_1 > t.len_2, 1, np.where(t.len_2 > t.len_1, 2, 0))
    return _side_share(t, side, "longer", resamples, level, seed)


def self_preference(
    t: SwapTable, judge: str | None = None, resamples: int = 1000, level: float = 0.95, seed: int | None = 0
) -> SideReport:
    """Share of verdicts for the judge's own output, over pairs where exactly one output is its own."""
    me = judge or t.judge
    side = np.where((t.model_1 == me) & (t.model_2 != me), 1, np.where((t.model_2 == me) & (t.model_1 != me), 2, 0))
    return _side_share(t, side.astype(np.int64), "own", resamples, level, seed)


@dataclass(frozen=True, kw_only=True)
class JudgeFit:
    """Judge parameters recovered from its verdicts: P(slot 1) = σ(k·Δq + β + φ·Δlen + δ·own).
    A parameter the data cannot identify (no quality, no length spread, no own outputs) is None."""

    judge: str
    simulated: bool
    n_pairs: int
    beta: Interval
    k: Interval | None
    phi: Interval | None
    delta: Interval | None
    separated: bool = False  # every verdict predicted exactly: estimates are "very large", held by the ridge


def judge_design(t: SwapTable, length_scale: float = 200.0) -> Design:
    """`fit_judge`'s regression: "chose slot 1" on [1, Δquality, tanh(Δlength/scale), own],
    one row per order of every parsed pair. Columns the data cannot identify are left out."""
    sub = t.where(t.valid)
    if sub.n == 0:
        raise ValueError("no parsed pairs to fit")
    dq = sub.quality_1 - sub.quality_2
    dl = length_feature(sub.len_1, sub.len_2, length_scale)
    own = ((sub.model_1 == t.judge) & (sub.model_2 != t.judge)).astype(float) - (
        (sub.model_2 == t.judge) & (sub.model_1 != t.judge)
    ).astype(float)
    cols = {"beta": np.ones(sub.n), "k": dq, "phi": dl, "delta": own}
    use = [name for name, c in cols.items() if name == "beta" or (np.all(np.isfinite(c)) and np.ptp(c) > 0)]
    # rows: order 12 (slot 1 = output 1) then order 21 (slot 1 = output 2; differences change sign)
    sign = {"beta": 1.0, "k": -1.0, "phi": -1.0, "delta": -1.0}
    x = np.concatenate([np.stack([cols[u] for u in use], axis=1), np.stack([cols[u] * sign[u] for u in use], axis=1)])
    y = np.concatenate([(sub.w12 == 1) + 0.5 * (sub.w12 == 0), (sub.w21 == 2) + 0.5 * (sub.w21 == 0)]).astype(float)
    return Design(tuple(use), x, y, np.concatenate([np.arange(sub.n), np.arange(sub.n)]))


def fit_judge(
    t: SwapTable, length_scale: float = 200.0, resamples: int = 1000, level: float = 0.95, seed: int | None = 0
) -> JudgeFit:
    """Logistic regression of "chose slot 1" on [1, Δquality, tanh(Δlength/scale), own] over both
    orders of every parsed pair (`judge_design`); ties count as ½. Maximum likelihood; intervals
    resample pairs."""
    d = judge_design(t, length_scale)
    units = _merge_units(d.x, d.y, d.unit)
    point, boot = _fit_with_draws(units, resample_kind_counts(units.counts, resamples, seed))
    iv = {u: interval(float(point[i]), boot[:, i], level) for i, u in enumerate(d.columns)}
    fitted = _sigmoid(d.x @ point)
    separated = bool(np.all(np.abs(fitted - d.y) < 0.01))
    return JudgeFit(
        judge=t.judge,
        simulated=t.simulated,
        n_pairs=int(d.unit.size // 2),
        beta=iv["beta"],
        k=iv.get("k"),
        phi=iv.get("phi"),
        delta=iv.get("delta"),
        separated=separated,
    )


# --- everything for one judge ------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class BiasReport:
    """All metrics for one judge over a battery of pair sets (None where a set is absent)."""

    judge: str
    simulated: bool
    n_unparseable: int  # judgments that gave no verdict, over every set
    position: PositionReport | None  # correct vs incorrect answers
    padded_wrong: PositionReport | None  # a concise right answer vs a padded wrong one
    verbosity: SideReport | None  # the same answer, concise vs padded
    self_preference: SideReport | None
    length: LengthControl | None  # writers against the baseline
    fit: JudgeFit | None  # k, β, φ, δ over every set with ground-truth quality


def report(
    swaps: Sequence[Swap],
    baseline: str = "writer/baseline",
    length_scale: float = 200.0,
    resamples: int = 1000,
    seed: int | None = 0,
) -> BiasReport:
    """Split judged pairs by kind (as `labkit.experiments.judging.pairs.battery` makes them) and measure each."""
    t = table(swaps)

    def part(*kinds: str) -> SwapTable | None:
        sub = t.of_kind(*kinds)
        return sub if sub.n else None

    r, sd = resamples, seed
    pos, wrong, verb, own, writers = (
        part("correctness"),
        part("verbosity_wrong"),
        part("verbosity"),
        part("self"),
        part("writer"),
    )
    known = t.where(np.isfinite(t.quality_1) & np.isfinite(t.quality_2) & t.valid)
    return BiasReport(
        judge=t.judge,
        simulated=t.simulated,
        n_unparseable=int((t.w12 < 0).sum() + (t.w21 < 0).sum()),
        position=position(pos, resamples=r, seed=sd) if pos else None,
        padded_wrong=position(wrong, resamples=r, seed=sd) if wrong else None,
        verbosity=verbosity(verb, resamples=r, seed=sd) if verb else None,
        self_preference=self_preference(own, resamples=r, seed=sd) if own else None,
        length=length_controlled(writers, baseline, resamples=r, seed=sd) if writers and writers.valid.any() else None,
        fit=fit_judge(known, length_scale, resamples=r, seed=sd) if known.n else None,
    )

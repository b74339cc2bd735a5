"""Per-round accounting of a multi-case repair loop: who got fixed, who got broken, at what cost.

Input is one polars row per (case, round) saying whether the case's candidate was correct
after that round; round 0 is the state before any repair. A round's transitions compare
each case with itself one round earlier: wrong -> right is *fixed*, right -> wrong is
*broken* (including cases that were right before round 1), and net = fixed - broken.

Two success curves are reported on purpose, because they disagree. `cumulative_fixed`
counts fixes ever made and only rises; `correct` counts cases right now and falls as soon
as a round breaks more than it fixes. Watching only the first is how a loop keeps running
past the point where it helps (seed 000, worked example B).

Intervals are percentile bootstraps over cases: resample whole cases (every round of a
case together) with `labkit.core.stats.resample_counts`, then get every resample's column sums
from one matrix product (resample counts x per-case columns). No Python loop per resample.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
import polars as pl

from labkit.core.errors import InvalidRounds
from labkit.core.paths import DATA
from labkit.core.stats import percentile_bounds, resample_counts
from labkit.loop.engine.stopping import RoundStats
from labkit.record.events import Kind

# The chapter's worked example B as per-case data (see data/diminishing_returns/README.md).
CHAPTER_EXAMPLE = DATA / "diminishing_returns" / "rounds.csv"


# -- input ------------------------------------------------------------------------------

_OPTIONAL = {"cost": 0.0, "seconds": 0.0}


def read_rounds(path: str | Path) -> pl.DataFrame:
    """Read a per-case per-round CSV (case, round, correct as true/false, optional slice, cost, seconds)."""
    p = Path(path)
    if not p.is_file():
        raise InvalidRounds(f"cannot read rounds from {p}: no such file")
    schema = {"case": pl.Utf8, "slice": pl.Utf8, "round": pl.Int64, "correct": pl.Boolean,
              "cost": pl.Float64, "seconds": pl.Float64}  # fmt: skip
    try:
        df = pl.read_csv(p, schema_overrides=schema)
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise InvalidRounds(f"cannot read rounds from {p}: {exc}") from exc
    try:
        prepare(df)
    except InvalidRounds as exc:
        raise InvalidRounds(f"{p}: {exc}") from exc
    return df


def prepare(frame: pl.DataFrame, *, slice_by: str | None = None) -> pl.DataFrame:
    """Check a per-case per-round frame and complete it to every (case, round).

    Needs columns `case`, `round` (int, 0 = before repair) and `correct` (bool); `cost`
    and `seconds` are optional per-round spend (0 if absent). A case with no row for a
    later round was not touched in it: it keeps its state and spends nothing. Raises
    InvalidRounds naming the first problem found.
    """
    if not isinstance(frame, pl.DataFrame):
        raise InvalidRounds(f"need a polars DataFrame, got {type(frame).__name__}")
    missing = [c for c in ("case", "round", "correct") if c not in frame.columns]
    if slice_by is not None and slice_by not in frame.columns:
        missing.append(slice_by)
    if missing:
        raise InvalidRounds(f"frame lacks column(s) {missing}; it has {frame.columns}")
    if frame.height == 0:
        raise InvalidRounds("frame has no rows: nothing to account")
    if not frame.schema["round"].is_integer():
        raise InvalidRounds(f"column 'round' must be integer, got {frame.schema['round']}")
    if frame.schema["correct"] != pl.Boolean:
        raise InvalidRounds(f"column 'correct' must be Boolean, got {frame.schema['correct']}")
    for col in ("case", "round", "correct"):
        nulls = frame[col].null_count()
        if nulls:
            raise InvalidRounds(f"column {col!r} has {nulls} null value(s)")
    if frame["round"].min() < 0:  # type: ignore[operator]
        raise InvalidRounds(f"rounds must be >= 0, found {frame['round'].min()!r}")
    dup = frame.group_by("case", "round").len().filter(pl.col("len") > 1)
    if dup.height:
        row = dup.row(0, named=True)
        raise InvalidRounds(f"case {row['case']!r} has {row['len']} rows for round {row['round']}")
    starts = frame.group_by("case").agg(pl.col("round").min().alias("first"))
    late = starts.filter(pl.col("first") != 0)
    if late.height:
        row = late.row(0, named=True)
        raise InvalidRounds(
            f"case {row['case']!r} has no round 0 (first round {row['first']}): its starting state is unknown"
        )
    if slice_by is not None:
        per_case = frame.group_by("case").agg(pl.col(slice_by).n_unique().alias("n"))
        bad = per_case.filter(pl.col("n") > 1)
        if bad.height:
            raise InvalidRounds(f"case {bad['case'][0]!r} is in more than one {slice_by!r}")

    df = frame.with_columns(pl.col("case").cast(pl.Utf8), pl.col("round").cast(pl.Int64))
    for col, default in _OPTIONAL.items():
        if col not in df.columns:
            df = df.with_columns(pl.lit(default).alias(col))
        df = df.with_columns(pl.col(col).cast(pl.Float64).fill_null(0.0))
    keep = ["case", "round", "correct", *_OPTIONAL]
    if slice_by is not None:
        keep.append(slice_by)
    df = df.select(keep)

    # Complete the grid: untouched rounds carry the last state forward and cost nothing.
    rounds = int(df["round"].max())  # type: ignore[arg-type]
    grid = (
        df.select("case")
        .unique()
        .join(pl.DataFrame({"round": list(range(rounds + 1))}, schema={"round": pl.Int64}), how="cross")
    )
    full = grid.join(df, on=["case", "round"], how="left").sort("case", "round")
    fill = [pl.col("correct").forward_fill().over("case")]
    if slice_by is not None:
        fill.append(pl.col(slice_by).forward_fill().backward_fill().over("case"))
    return full.with_columns(*fill, *(pl.col(c).fill_null(0.0) for c in _OPTIONAL))


def _matrices(df: pl.DataFrame) -> tuple[list[str], dict[str, npt.NDArray[np.float64]]]:
    """Per-case (cases, rounds+1) arrays: correct, cost, seconds; cases sorted by id."""
    cases = df["case"].unique().sort().to_list()
    rounds = int(df["round"].max()) + 1  # type: ignore[arg-type]
    df = df.sort("case", "round")
    out = {col: df[col].cast(pl.Float64).to_numpy().reshape(len(cases), rounds) for col in ("correct", *_OPTIONAL)}
    return cases, out


def _columns(m: dict[str, npt.NDArray[np.float64]]) -> dict[str, npt.NDArray[np.float64]]:
    """Per-case per-round indicator columns whose sums over cases are the round counts."""
    c = m["correct"]
    before, after = c[:, :-1], c[:, 1:]
    return {
        "fixed": (1 - before) * after,
        "broken": before * (1 - after),
        "right_before": before,
        "wrong_before": 1 - before,
        "correct": c,  # includes round 0
        "cost": m["cost"],
        "seconds": m["seconds"],
    }


# -- counts -------------------------------------------------------------------------------


def round_stats(frame: pl.DataFrame) -> tuple[RoundStats, ...]:
    """Counts for rounds 1..R (no intervals): the input stop rules read."""
    _, m = _matrices(prepare(frame))
    cols = _columns(m)
    s = {k: v.sum(axis=0) for k, v in cols.items()}
    return tuple(
        RoundStats(
            round=r,
            fixed=int(s["fixed"][r - 1]),
            broken=int(s["broken"][r - 1]),
            wrong_before=int(s["wrong_before"][r - 1]),
            right_before=int(s["right_before"][r - 1]),
            cost=float(s["cost"][r]),
            seconds=float(s["seconds"][r]),
        )
        for r in range(1, m["correct"].shape[1])
    )


def transitions(frame: pl.DataFrame) -> pl.DataFrame:
    """The full transition matrix per round, long form: round, before, after, count, cases.

    `before`/`after` are "right" or "wrong"; every one of the four cells is present for
    every round (count 0, empty list when nobody moved that way); `cases` names who moved.
    """
    df = prepare(frame)
    state = pl.when(pl.col("correct")).then(pl.lit("right")).otherwise(pl.lit("wrong"))
    df = df.sort("case", "round").with_columns(state.alias("after"), state.shift(1).over("case").alias("before"))
    moved = (
        df.filter(pl.col("round") > 0)
        .group_by("round", "before", "after")
        .agg(pl.len().cast(pl.Int64).alias("count"), pl.col("case").sort().alias("cases"))
    )
    rounds = int(df["round"].max())  # type: ignore[arg-type]
    cells = pl.DataFrame(
        [(r, b, a) for r in range(1, rounds + 1) for b in ("wrong", "right") for a in ("wrong", "right")],
        schema={"round": pl.Int64, "before": pl.Utf8, "after": pl.Utf8},
        orient="row",
    )
    out = cells.join(moved, on=["round", "before", "after"], how="left")
    return out.with_columns(
        pl.col("count").fill_null(0), pl.col("cases").fill_null(pl.lit([], dtype=pl.List(pl.Utf8)))
    ).sort("round", "before", "after", descending=[False, True, True])


def moved(frame: pl.DataFrame, round: int) -> dict[str, list[str]]:
    """Who got fixed and who got broken in `round` (case ids, sorted)."""
    t = transitions(frame).filter(pl.col("round") == round)
    if t.height == 0:
        raise InvalidRounds(f"no round {round} in the frame (rounds 1..{transitions(frame)['round'].max()!r})")

    def cell(before: str, after: str) -> list[str]:
        row = t.filter((pl.col("before") == before) & (pl.col("after") == after))
        return list(row["cases"][0])

    return {"fixed": cell("wrong", "right"), "broken": cell("right", "wrong")}


# -- bootstrap ----------------------------------------------------------------------------


def _resampled_sums(matrix: npt.NDArray[np.float64], resamples: int, seed: int | None) -> npt.NDArray[np.float64]:
    """(resamples, k) column sums of `matrix` (cases, k) over bootstrap resamples of its rows.

    counts @ matrix (labkit.core.stats.resample_counts): a gather of (resamples, cases, k)
    would not fit in memory at 10^4 cases x 10^3 resamples, a (resamples, cases) count matrix does.
    """
    return resample_counts(matrix.shape[0], resamples, seed) @ matrix


def _ratio(num: npt.NDArray[np.float64], den: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def per_round(frame: pl.DataFrame, *, resamples: int = 1000, level: float = 0.95, seed: int | None = 0) -> pl.DataFrame:
    """One row per round (0..R) with counts, rates, spend and bootstrap intervals over cases.

    Columns: round, cases, right_before, wrong_before, fixed, broken, net, correct,
    success_rate, cumulative_fixed, fix_rate, break_rate, cost, seconds, and `<x>_low`,
    `<x>_high` for net, correct, success_rate, cumulative_fixed, fix_rate, break_rate, cost.
    Round 0 is the starting state: no transitions (0), rates null. `resamples=0` skips
    the intervals (they come out null).
    """
    if resamples < 0:
        raise InvalidRounds(f"resamples must be >= 0, got {resamples}")
    if not 0.0 < level < 1.0:
        raise InvalidRounds(f"level must be in (0, 1), got {level}")
    _, m = _matrices(prepare(frame))
    return _per_round(m, resamples, level, seed)


def _derive(s: dict[str, npt.NDArray[np.float64]], n: int) -> dict[str, npt.NDArray[np.float64]]:
    """From column sums (last axis = round 1..R, or 0..R for correct/cost/seconds) to metrics.

    Works on a single row of sums or a (resamples, ...) stack of them alike.
    """
    zero = np.zeros(s["fixed"].shape[:-1] + (1,))
    nan = np.full_like(zero, np.nan)
    fixed = np.concatenate([zero, s["fixed"]], axis=-1)
    broken = np.concatenate([zero, s["broken"]], axis=-1)
    right_before = np.concatenate([nan, s["right_before"]], axis=-1)
    wrong_before = np.concatenate([nan, s["wrong_before"]], axis=-1)
    return {
        "fixed": fixed,
        "broken": broken,
        "net": fixed - broken,
        "correct": s["correct"],
        "success_rate": s["correct"] / n,
        "cumulative_fixed": np.cumsum(fixed, axis=-1),
        "fix_rate": _ratio(fixed, wrong_before),
        "break_rate": _ratio(broken, right_before),
        "right_before": right_before,
        "wrong_before": wrong_before,
        "cost": s["cost"],
        "seconds": s["seconds"],
    }


_INTERVALS = ("net", "correct", "success_rate", "cumulative_fixed", "fix_rate", "break_rate", "cost")


def _per_round(m: dict[str, npt.NDArray[np.float64]], resamples: int, level: float, seed: int | None) -> pl.DataFrame:
    cols = _columns(m)
    n, rounds = m["correct"].shape
    names = list(cols)
    widths = [cols[k].shape[1] for k in names]
    stacked = np.concatenate([cols[k] for k in names], axis=1)  # (cases, all columns)
    split = np.cumsum(widths)[:-1]

    point = _derive(dict(zip(names, np.split(stacked.sum(axis=0), split), strict=True)), n)
    out: dict[str, object] = {"round": np.arange(rounds), "cases": np.full(rounds, n)}
    for key in ("right_before", "wrong_before", "fixed", "broken", "net", "correct"):
        out[key] = point[key]
    for key in ("success_rate", "cumulative_fixed", "fix_rate", "break_rate", "cost", "seconds"):
        out[key] = point[key]
    if resamples:
        sums = _resampled_sums(stacked, resamples, seed)  # (resamples, all columns)
        draws = _derive(dict(zip(names, np.split(sums, split, axis=1), strict=True)), n)
        for key in _INTERVALS:
            low, high = percentile_bounds(draws[key], level)
            out[f"{key}_low"], out[f"{key}_high"] = low, high
    else:
        for key in _INTERVALS:
            out[f"{key}_low"] = out[f"{key}_high"] = np.full(rounds, np.nan)

    df = pl.DataFrame(out)
    counts = ["right_before", "wrong_before", "fixed", "broken", "net", "correct", "cumulative_fixed"]
    floats = [c for c in df.columns if c not in counts and df.schema[c] == pl.Float64]
    return df.with_columns(pl.col(counts).fill_nan(None).cast(pl.Int64), pl.col(floats).fill_nan(None))


def per_slice(
    frame: pl.DataFrame,
    by: str = "slice",
    *,
    resamples: int = 1000,
    level: float = 0.95,
    seed: int | None = 0,
) -> pl.DataFrame:
    """`per_round` within each value of the case attribute `by`, stacked (first column `by`).

    Intervals resample cases within the slice. A case must belong to exactly one slice.
    """
    if resamples < 0:
        raise InvalidRounds(f"resamples must be >= 0, got {resamples}")
    if not 0.0 < level < 1.0:
        raise InvalidRounds(f"level must be in (0, 1), got {level}")
    df = prepare(frame, slice_by=by)
    parts = []
    for (value,), group in df.group_by(by, maintain_order=True):
        _, m = _matrices(group.drop(by))
        table = _per_round(m, resamples, level, seed)
        parts.append(table.select(pl.lit(value).alias(by), pl.all()))
    return pl.concat(parts).sort(by, "round")


# -- from a ledger --------------------------------------------------------------------------


def from_ledger(events: pl.DataFrame, *, kind: str = Kind.SCORE, field: str = "correct") -> pl.DataFrame:
    """Per-case per-round correctness from a ledger frame (`Ledger.frame()`), whichever strategy ran.

    Reads the engine's `kind` events (score: one per case per round) whose JSON `detail`
    has `case`, the boolean `field` ("correct": hidden scoring when the case has hidden
    tests, else the visible verdict; "visible": the visible verdict only) and optionally
    `slice`. Spend of *any* event carrying a `case` in its detail is summed into that
    case's round (generation, validation and scoring all cost something). Returns the frame
    `per_round` takes: case, round, correct, slice, cost, seconds.
    """
    need = {"round", "kind", "detail", "cost_units", "wall_seconds"}
    if not need <= set(events.columns):
        raise InvalidRounds(f"not a ledger frame: lacks {sorted(need - set(events.columns))}")
    detail = pl.Struct({"case": pl.Utf8, "slice": pl.Utf8, field: pl.Boolean})
    df = events.with_columns(pl.col("detail").str.json_decode(detail).alias("_d")).unnest("_d")
    if field != "correct":
        df = df.rename({field: "correct"})
    scored = df.filter((pl.col("kind") == str(kind)) & pl.col("case").is_not_null())
    if scored.height == 0:
        raise InvalidRounds(f"ledger frame has no {str(kind)!r} events with a 'case' in detail")
    if scored["correct"].null_count():
        raise InvalidRounds(f"{scored['correct'].null_count()} {str(kind)!r} event(s) lack a boolean {field!r}")
    spend = (
        df.filter(pl.col("case").is_not_null())
        .group_by("case", "round")
        .agg(pl.col("cost_units").sum().alias("cost"), pl.col("wall_seconds").sum().alias("seconds"))
    )
    state = scored.group_by("case", "round").agg(pl.col("correct").last(), pl.col("slice").last())
    out = state.join(spend, on=["case", "round"], how="left")
    return out.with_columns(
        pl.col("slice").fill_null(""), pl.col("cost").fill_null(0.0), pl.col("seconds").fill_null(0.0)
    ).sort("case", "round")

"""Per-round accounting: the chapter's table from per-case data, transitions, intervals, errors."""

from __future__ import annotations

import csv
import importlib.util
import io
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit.core.stats import bootstrap_columns
from labkit.loop.engine import accounting
from labkit.loop.engine.accounting import InvalidRounds

DATA = Path(__file__).resolve().parents[1] / "data" / "diminishing_returns"


def chapter() -> pl.DataFrame:
    return accounting.read_rounds(DATA / "rounds.csv")


def frame(states: dict[str, list[bool]], **extra: list[object]) -> pl.DataFrame:
    rows = [(c, r, ok) for c, seq in states.items() for r, ok in enumerate(seq)]
    df = pl.DataFrame(rows, schema={"case": pl.Utf8, "round": pl.Int64, "correct": pl.Boolean}, orient="row")
    return df.with_columns(**{k: pl.Series(v) for k, v in extra.items()})


# -- the chapter's example -----------------------------------------------------------------


def test_chapter_table_comes_out_of_the_per_case_data() -> None:
    table = accounting.per_round(chapter(), resamples=200).filter(pl.col("round") > 0)
    assert table["wrong_before"][0] == 100  # 100 first-round failures
    assert table["fixed"].to_list() == [35, 10, 3]
    assert table["broken"].to_list() == [4, 6, 7]
    assert table["net"].to_list() == [31, 4, -4]


def test_cumulative_success_still_rises_while_round_three_loses_ground() -> None:
    table = accounting.per_round(chapter(), resamples=0)
    cumulative = table["cumulative_fixed"].to_list()
    correct = table["correct"].to_list()
    assert all(b > a for a, b in zip(cumulative, cumulative[1:], strict=False))  # rises every round
    assert correct[3] < correct[2]  # ...but fewer cases are right after round 3 than before it
    assert correct[3] - correct[2] == table["net"][3]


def test_committed_data_file_is_what_the_generator_builds() -> None:
    spec = importlib.util.spec_from_file_location("make_dr", DATA / "make.py")
    assert spec and spec.loader
    make = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make)
    out = io.StringIO()
    rows = make.build()
    w = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    assert (DATA / "rounds.csv").read_text() == out.getvalue()


# -- counts against an independent computation ---------------------------------------------


STATES = {
    "a": [False, True, True, False],
    "b": [True, False, True, True],
    "c": [False, False, False, True],
    "d": [True, True, True, True],
}


def _by_hand(states: dict[str, list[bool]]) -> list[tuple[int, int]]:
    rounds = len(next(iter(states.values())))
    out = []
    for r in range(1, rounds):
        fixed = sum(1 for s in states.values() if not s[r - 1] and s[r])
        broken = sum(1 for s in states.values() if s[r - 1] and not s[r])
        out.append((fixed, broken))
    return out


def test_fixed_and_broken_match_a_plain_python_count() -> None:
    table = accounting.per_round(frame(STATES), resamples=0).filter(pl.col("round") > 0)
    assert list(zip(table["fixed"], table["broken"], strict=True)) == _by_hand(STATES)
    assert table["correct"].to_list() == [2, 3, 3]


def test_transition_matrix_names_who_moved() -> None:
    t = accounting.transitions(frame(STATES))
    assert t.height == 3 * 4  # every cell, every round, even when empty
    assert t.group_by("round").agg(pl.col("count").sum())["count"].to_list() == [4, 4, 4]
    cell = t.filter((pl.col("round") == 3) & (pl.col("before") == "right") & (pl.col("after") == "wrong"))
    assert cell["cases"].to_list() == [["a"]]
    cell = t.filter((pl.col("round") == 2) & (pl.col("before") == "wrong") & (pl.col("after") == "right"))
    assert cell["cases"].to_list() == [["b"]]
    empty = t.filter((pl.col("round") == 3) & (pl.col("before") == "wrong") & (pl.col("after") == "wrong"))
    assert empty["count"].to_list() == [0] and empty["cases"].to_list() == [[]]


def test_a_case_missing_later_rounds_keeps_its_state_and_spends_nothing() -> None:
    df = pl.DataFrame(
        {
            "case": ["x", "x", "y", "y", "y"],
            "round": [0, 1, 0, 1, 2],
            "correct": [False, True, True, True, False],
            "cost": [1.0, 2.0, 1.0, 1.0, 1.0],
        }
    )
    table = accounting.per_round(df, resamples=0)
    assert table["correct"].to_list() == [1, 2, 1]  # x stays right in round 2
    assert table["cost"].to_list() == [2.0, 3.0, 1.0]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.booleans(), min_size=4, max_size=4), min_size=1, max_size=12))
def test_net_adds_up_to_the_change_in_correct_cases(rows: list[list[bool]]) -> None:
    states = {f"c{i}": r for i, r in enumerate(rows)}
    table = accounting.per_round(frame(states), resamples=0)
    assert list(zip(table["fixed"][1:], table["broken"][1:], strict=True)) == _by_hand(states)
    assert int(table["net"].sum()) == table["correct"][-1] - table["correct"][0]
    assert (table["fixed"][1:] + table["right_before"][1:] - table["broken"][1:]).to_list() == table["correct"][
        1:
    ].to_list()


# -- intervals ---------------------------------------------------------------------------


def test_resampled_sums_are_the_same_draws_as_stats_bootstrap_columns() -> None:
    rng = np.random.default_rng(1)
    m = rng.integers(0, 2, size=(50, 3)).astype(float)
    sums = accounting._resampled_sums(m, 300, seed=7)
    ours = np.quantile(sums, [0.025, 0.975], axis=0)
    theirs = bootstrap_columns(m, resamples=300, seed=7)
    for j, iv in enumerate(theirs):
        assert (ours[0, j], ours[1, j]) == pytest.approx((iv.low, iv.high))


def test_intervals_bracket_the_estimate_and_widen_with_fewer_cases() -> None:
    table = accounting.per_round(chapter(), resamples=500).filter(pl.col("round") > 0)
    for key in ("net", "correct", "fix_rate", "break_rate", "cumulative_fixed"):
        assert (table[f"{key}_low"] <= table[key]).all() and (table[key] <= table[f"{key}_high"]).all(), key
    small = chapter().filter(pl.col("case").is_in([f"f{i:03d}" for i in range(1, 21)]))
    few = accounting.per_round(small, resamples=500)
    width = (table["fix_rate_high"] - table["fix_rate_low"])[0]
    assert (few["fix_rate_high"] - few["fix_rate_low"])[1] > width


def test_identical_cases_give_a_zero_width_interval() -> None:
    table = accounting.per_round(frame({f"c{i}": [False, True] for i in range(10)}), resamples=100)
    assert table["net_low"][1] == table["net_high"][1] == 10


def test_per_slice_adds_up_to_the_whole() -> None:
    whole = accounting.per_round(chapter(), resamples=0)
    parts = accounting.per_slice(chapter(), resamples=100)
    assert set(parts["slice"]) == {"string", "numeric", "stateful"}
    summed = parts.group_by("round").agg(pl.col("fixed", "broken", "correct").sum()).sort("round")
    assert summed["fixed"].to_list() == whole["fixed"].to_list()
    assert summed["broken"].to_list() == whole["broken"].to_list()
    assert summed["correct"].to_list() == whole["correct"].to_list()


# -- bad input ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("df", "match"),
    [
        (pl.DataFrame({"case": ["a"], "round": [0]}), "lacks column"),
        (pl.DataFrame({"case": ["a"], "round": [0], "correct": [1]}), "must be Boolean"),
        (pl.DataFrame({"case": ["a", "a"], "round": [0, 0], "correct": [True, False]}), "2 rows for round 0"),
        (pl.DataFrame({"case": ["a"], "round": [1], "correct": [True]}), "no round 0"),
        (
            pl.DataFrame({"case": ["a"], "round": [0], "correct": [None]}, schema_overrides={"correct": pl.Boolean}),
            "null",
        ),
        (pl.DataFrame({"case": ["a"], "round": [-1], "correct": [True]}), ">= 0"),
        (pl.DataFrame({"case": ["a"], "round": [0.0], "correct": [True]}), "integer"),
    ],
)
def test_bad_frames_get_a_specific_error(df: pl.DataFrame, match: str) -> None:
    with pytest.raises(InvalidRounds, match=match):
        accounting.per_round(df, resamples=0)


def test_a_case_in_two_slices_is_refused() -> None:
    df = frame({"a": [False, True]}, slice=["x", "y"])
    with pytest.raises(InvalidRounds, match="more than one 'slice'"):
        accounting.per_slice(df, resamples=0)


def test_read_rounds_names_the_file_and_the_problem(tmp_path: Path) -> None:
    bad = tmp_path / "r.csv"
    bad.write_text("case,round,correct\na,0,maybe\n")
    with pytest.raises(InvalidRounds, match="r.csv"):
        accounting.read_rounds(bad)
    with pytest.raises(InvalidRounds, match="no such file"):
        accounting.read_rounds(tmp_path / "missing.csv")


def test_moved_names_who_got_fixed_and_broken() -> None:
    assert accounting.moved(frame(STATES), 3) == {"fixed": ["c"], "broken": ["a"]}
    moved = accounting.moved(chapter(), 3)
    assert len(moved["fixed"]) == 3 and len(moved["broken"]) == 7
    with pytest.raises(InvalidRounds, match="no round 9"):
        accounting.moved(frame(STATES), 9)

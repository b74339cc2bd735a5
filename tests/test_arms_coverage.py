"""Seed 000's "test coverage" for the same-budget comparison, as a stated proxy computed from the
ledger (metrics.ArmRow.coverage): of the jobs whose final answer fails the hidden tests, the share
the visible tests also fail. Checked against hand counts on the recorded sweep, and shown in the
arms table."""

from __future__ import annotations

import polars as pl
import pytest

from labkit.experiments.arms import arm_metrics as metrics
from labkit.record.ledger import Ledger
from labkit.views import arms_page as page


@pytest.fixture(scope="module")
def ledger() -> Ledger:
    recorded = page.recorded_default()
    assert recorded is not None, "data/arms/simulated_default is the page's recorded sweep"
    return recorded[0]


@pytest.fixture(scope="module")
def runs(ledger: Ledger) -> pl.DataFrame:
    return metrics.runs(ledger)


def test_coverage_is_the_share_of_wrong_answers_the_visible_tests_fail(runs: pl.DataFrame) -> None:
    rows = {r.arm: r for r in metrics.table(runs)}
    for arm, row in rows.items():
        wrong = runs.filter((pl.col("arm") == arm) & (pl.col("status") != "not available") & ~pl.col("correct"))
        assert row.coverage is not None and wrong.height > 0
        assert row.coverage.estimate == pytest.approx((~wrong["visible"]).sum() / wrong.height)
    # best-of-n picks by the visible tests: what it still gets wrong, they pass; the critic loop's errors they catch
    assert rows["best_of_n"].coverage.estimate < 0.1 < 0.7 < rows["eval_opt"].coverage.estimate  # type: ignore[union-attr]


def test_coverage_moves_with_what_the_visible_tests_say(runs: pl.DataFrame) -> None:
    for visible, expected in ((True, 0.0), (False, 1.0)):
        table = metrics.table(runs.with_columns(pl.lit(visible).alias("visible")))
        assert all(r.coverage is not None and r.coverage.estimate == expected for r in table if r.status == "")
    assert all(r.coverage is None for r in metrics.table(runs.with_columns(pl.lit(True).alias("correct"))))


def test_the_arms_table_shows_it(ledger: Ledger) -> None:
    frame = page.arms_frame(ledger)
    shown = dict(zip(frame["arm"], frame[page.COVERAGE], strict=True))
    assert shown[page.arm_name("best_of_n")].startswith("0.06")  # 1 of 17 wrong answers caught
    assert "proxy" in page.COVERAGE and "not line coverage" in page.COVERAGE_MD

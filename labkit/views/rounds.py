"""What the diminishing-returns notebook shows per round, built once in labkit (not in cells).

Round pages for a Stepper (transition matrix as inline SVG beside who moved), and the columns the
per-round and per-slice tables show. Everything here only formats frames computed by
`labkit.loop.accounting` from a ledger or a per-case CSV.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from labkit.loop import accounting
from labkit.views import charts_rounds as charts
from labkit.views.pages import beside

__all__ = ["ROUND_COLUMNS", "SLICE_COLUMNS", "chapter_pages", "round_pages", "round_table", "slice_table"]

ROUND_COLUMNS = ("round", "fixed", "broken", "net", "net_low", "net_high", "correct", "cumulative_fixed", "cost", "seconds")
SLICE_COLUMNS = ("slice", "round", "fixed", "broken", "net", "net_low", "net_high", "fix_rate", "break_rate")


def round_table(table: pl.DataFrame) -> pl.DataFrame:
    """The per-round table's shown columns (those the frame has)."""
    return table.select([c for c in ROUND_COLUMNS if c in table.columns])


def slice_table(slices: pl.DataFrame) -> pl.DataFrame:
    """Per-slice rows for the repair rounds (round 0 is the starting state, no transitions)."""
    return slices.filter(pl.col("round") > 0).select([c for c in (*SLICE_COLUMNS, "cost") if c in slices.columns])


def round_pages(frame: pl.DataFrame, side: Callable[[int], str]) -> list[str]:
    """One page per repair round of a per-case frame: its transition matrix (inline SVG) beside `side(round)`."""
    transitions = accounting.transitions(frame)
    rounds = int(transitions["round"].max() or 0)  # type: ignore[arg-type]
    return [beside(charts.transitions_svg(transitions, r), side(r)) for r in range(1, rounds + 1)]


def chapter_pages(frame: pl.DataFrame) -> list[str]:
    """Round pages for a per-case frame: who was fixed and who was broken, by id."""

    def moved(r: int) -> str:
        m = accounting.moved(frame, r)
        return (
            f"<p><b>fixed</b> ({len(m['fixed'])}): {', '.join(m['fixed'])}</p>"
            f"<p><b>broken</b> ({len(m['broken'])}): {', '.join(m['broken'])}</p>"
        )

    return round_pages(frame, moved)

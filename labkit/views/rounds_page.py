"""What the diminishing-returns notebook shows per round, built once in labkit (not in cells).

Round pages for a Stepper (transition matrix as inline SVG beside who moved), and the columns the
per-round and per-slice tables show. Everything here only formats frames computed by
`labkit.loop.engine.accounting` from a ledger or a per-case CSV.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from labkit.loop.engine import accounting
from labkit.views import charts_rounds as charts
from labkit.views.pages import beside

__all__ = ["NET", "chapter_pages", "net_text", "round_pages", "round_table", "slice_table"]

NET = "net = fixed − broken [95% CI]"


def net_text(net: int, low: float | None, high: float | None) -> str:
    """A round's net with its bootstrap interval, as counts: "+10 [+3, +16]"; "—" with no interval."""

    def signed(x: float) -> str:
        return f"{x:+.0f}" if round(x) else "0"

    if low is None or high is None:
        return "—"
    if low == high == net:
        return signed(net)
    return f"{signed(net)} [{signed(low)},\u00a0{signed(high)}]"


def round_table(table: pl.DataFrame) -> pl.DataFrame:
    """The per-round table as a class reads it: counts, the net with its interval, the spend in cost
    units (no wall-clock column: it measures the machine, not the loop)."""
    rows = []
    for r in table.iter_rows(named=True):
        row = {"round": r["round"], "fixed": r["fixed"] if r["round"] else None, "broken": r["broken"] if r["round"] else None,
               NET: net_text(r["net"], r.get("net_low"), r.get("net_high")) if r["round"] else "—",
               "right after the round": r["correct"], "fixed so far": r["cumulative_fixed"]}  # fmt: skip
        if "cost" in r:
            row["cost units"] = round(float(r["cost"]), 1)
        rows.append(row)
    return pl.DataFrame(rows)


def slice_table(slices: pl.DataFrame) -> pl.DataFrame:
    """One row per slice, one column per repair round: net with its interval and what moved; a round
    where nothing moved in a slice says so once instead of a row of zeros."""
    moved = slices.filter(pl.col("round") > 0)
    rounds = sorted(set(moved["round"].to_list()))
    rows = []
    for name in sorted(set(moved["slice"].to_list())):
        row: dict[str, str] = {"slice": name}
        for r in moved.filter(pl.col("slice") == name).sort("round").iter_rows(named=True):
            row[f"round {r['round']}"] = (
                "nothing moved"
                if r["fixed"] == r["broken"] == 0
                else f"{net_text(r['net'], r.get('net_low'), r.get('net_high'))}: {r['fixed']} fixed, {r['broken']} broken"
            )
        rows.append({"slice": name, **{f"round {k}": row.get(f"round {k}", "—") for k in rounds}})
    return pl.DataFrame(rows)


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

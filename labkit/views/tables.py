"""Frames as a class reads them: no dtype rows, no quotes, floats to a few decimals, every row.

`frame_html` is for HTML pages (step cards, stepper pages, exported notebooks): a plain table
that wraps long text instead of clipping it (a long test id or path breaks too, numbers and
short words never do, so a table fits its notebook). `rounded` keeps a frame a frame (for marimo's
own table widget) with its floats rounded for display.
"""

from __future__ import annotations

import html
import math

import polars as pl

from labkit.core.stats import Interval

__all__ = ["TABLE_STYLE", "bounded", "cell_text", "frame_html", "rounded"]

TABLE_STYLE = "border-collapse:collapse;margin:0.4em 0;font-size:0.95em"
_CELL = "padding:0.2em 0.7em;border-bottom:1px solid #ddd;text-align:left;vertical-align:top"
_HEAD = _CELL + ";border-bottom:2px solid #999;font-weight:600"  # a long header breaks between words
_LONG = 24  # a token longer than this (a test id, a path) may break anywhere; shorter ones never do


def cell_text(value: object, digits: int = 3) -> str:
    """One cell as text: floats to `digits` decimals (trailing zeros kept), None as a dash."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isnan(value):
            return "—"
        return f"{value:.{digits}f}"
    if isinstance(value, (list, tuple)):
        return ", ".join(cell_text(v, digits) for v in value)
    return str(value)


def frame_html(
    frame: pl.DataFrame, digits: int = 3, *, colours: dict[str, dict[str, str]] | None = None
) -> str:
    """Every row of `frame` as a plain HTML table; `colours[column][value]` colours a cell's text."""
    e = html.escape
    head = "".join(f'<th style="{_HEAD}">{e(c)}</th>' for c in frame.columns)
    body = []
    for row in frame.iter_rows(named=True):
        cells = []
        for col, value in row.items():
            text = cell_text(value, digits)
            colour = (colours or {}).get(col, {}).get(text)
            style = _CELL + (f";color:{colour};font-weight:600" if colour else "")
            if any(len(word) > _LONG for word in text.split()):
                style += ";overflow-wrap:anywhere"
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                style += ";text-align:right;font-variant-numeric:tabular-nums"
            cells.append(f'<td style="{style}">{e(text)}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f'<table class="labkit-table" style="{TABLE_STYLE}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def rounded(frame: pl.DataFrame, digits: int = 3) -> pl.DataFrame:
    """The same frame with every float column rounded to `digits` decimals, for display."""
    return frame.with_columns(pl.col(pl.Float32, pl.Float64).round(digits))


def bounded(iv: Interval, *, separated: bool = False, digits: int = 2) -> str:
    """An estimate with its interval, honest when the data cannot bound it.

    A fit whose verdicts are all predicted exactly ("separated") has no finite estimate:
    the number printed is wherever the ridge penalty stopped it, and a bootstrap over the
    same separated data collapses onto it ("8.005 [8.005, 8.005]"). Say so instead.
    """
    est, low, high = (cell_text(float(v), digits) for v in (iv.estimate, iv.low, iv.high))
    degenerate = iv.high - iv.low <= 1e-9 * max(1.0, abs(iv.estimate))
    if separated:
        side = "≥" if iv.estimate >= 0 else "≤"
        return f"unbounded ({side} {est}: every verdict is predicted exactly, so the data set no finite limit)"
    if degenerate:
        return f"{est} (every resample gave the same value)"
    return f"{est} [{low}, {high}]"

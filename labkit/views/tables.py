"""Frames as a class reads them: the one formatter every notebook's tables go through.

`frame_html` is for HTML pages (step cards, stepper pages, exported notebooks): a plain table
with human headers (`HEADERS`, else the column name with its underscores as spaces), integers
as integers (a float column whose every value is whole prints none of its zeros), floats to a
few decimals, "—" for a missing value, numbers and number-like text right-aligned (the dash
too, so a column lines up), words left-aligned. Long text wraps instead of clipping (a long
test id or path breaks too, numbers and short words never do, so a table fits its notebook).
`estimate` writes an estimate with its interval only when the interval says something;
`rounded` keeps a frame a frame (for marimo's own table widget) with its floats rounded.
"""

from __future__ import annotations

import html
import math
import re

import polars as pl

from labkit.core.stats import Interval

__all__ = [
    "HEADERS",
    "TABLE_STYLE",
    "bounded",
    "cell_text",
    "estimate",
    "frame_html",
    "header",
    "rounded",
]

TABLE_STYLE = "border-collapse:collapse;margin:0.4em 0;font-size:0.95em"
_CELL = "padding:0.2em 0.7em;border-bottom:1px solid #ddd;text-align:left;vertical-align:top"
_HEAD = _CELL + ";border-bottom:2px solid #999;font-weight:600"  # a long header breaks between words
_RIGHT = ";text-align:right;font-variant-numeric:tabular-nums"
_LONG = 24  # a token longer than this (a test id, a path) may break anywhere; shorter ones never do
_HYPHENATED = re.compile(r"(?<![\w-])(\w[\w.]*(?:-[\w.]+)+)")  # "GPT-3.5", "2024-05-01": never split at "-"
_NUMBER_LIKE = re.compile(r"^[−+\-]?\d[\d,.]*(\s|%|$)")  # "12", "0.50 [0.31, 0.69]", "3 of 6", "+2"

# Column names labkit's frames use, as a class reads them (units where there are units).
HEADERS = {
    "break_rate": "break rate",
    "cost": "cost units",
    "cost_units": "cost units",
    "cumulative_fixed": "fixed so far",
    "fix_rate": "fix rate",
    "net_high": "net, 95% high",
    "net_low": "net, 95% low",
    "seconds": "wall time (s)",
    "wall_seconds": "wall time (s)",
    "wrong_before": "wrong before",
}


def header(column: str) -> str:
    """A column's header as shown: `HEADERS`, else a snake_case name with spaces."""
    if column in HEADERS:
        return HEADERS[column]
    return column.replace("_", " ") if re.fullmatch(r"[a-z0-9_]+", column) else column


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


def _whole_words(escaped: str) -> str:
    """Short hyphenated tokens kept on one line (a narrow column must not print "GPT-/3.5")."""
    return _HYPHENATED.sub(
        lambda m: f'<span style="white-space:nowrap">{m[1]}</span>' if len(m[1]) <= _LONG else m[1], escaped
    )


def _whole(series: pl.Series) -> bool:
    """A float column whose every present value is a whole number (a count stored as float)."""
    values = [v for v in series.to_list() if v is not None and not math.isnan(v)]
    return bool(values) and all(float(v).is_integer() for v in values)


def _right(series: pl.Series) -> bool:
    """Numbers, and text that reads as numbers (estimates, "3 of 6"), line up on the right."""
    if series.dtype.is_numeric():
        return True
    if series.dtype != pl.Utf8:
        return False
    texts = [v for v in series.to_list() if v not in (None, "", "—")]
    return bool(texts) and all(_NUMBER_LIKE.match(v) for v in texts)


def frame_html(frame: pl.DataFrame, digits: int = 3, *, colours: dict[str, dict[str, str]] | None = None) -> str:
    """Every row of `frame` as a plain HTML table; `colours[column][value]` colours a cell's text."""
    e = html.escape
    right = {c: _right(frame[c]) for c in frame.columns}
    whole = {c: frame[c].dtype.is_float() and _whole(frame[c]) for c in frame.columns}
    head = "".join(f'<th style="{_HEAD}{_RIGHT if right[c] else ""}">{e(header(c))}</th>' for c in frame.columns)
    body = []
    for row in frame.iter_rows(named=True):
        cells = []
        for col, value in row.items():
            text = cell_text(value, 0 if whole[col] else digits)
            colour = (colours or {}).get(col, {}).get(text)
            style = _CELL + (f";color:{colour};font-weight:600" if colour else "")
            if any(len(word) > _LONG for word in text.split()):
                style += ";overflow-wrap:anywhere"
            if right[col]:
                style += _RIGHT
            cells.append(f'<td style="{style}">{_whole_words(e(text))}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f'<table class="labkit-table" style="{TABLE_STYLE}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def rounded(frame: pl.DataFrame, digits: int = 3) -> pl.DataFrame:
    """The same frame with every float column rounded to `digits` decimals, for display."""
    return frame.with_columns(pl.col(pl.Float32, pl.Float64).round(digits))


def estimate(iv: Interval | None, digits: int = 2) -> str:
    """An estimate with its 95% interval, "0.50 [0.31, 0.69]"; the bare estimate when every
    resample agreed (an interval [0.00, 0.00] says nothing the estimate does not); "—" for None.
    The bracket never breaks across lines."""
    if iv is None:
        return "—"
    est, low, high = (cell_text(float(v), digits) for v in (iv.estimate, iv.low, iv.high))
    if iv.high - iv.low <= 1e-9 * max(1.0, abs(iv.estimate)):
        return est
    return f"{est} [{low},\u00a0{high}]"


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

"""Charts of per-round accounting: the cumulative curve, the marginal one (altair), who moved (a 2x2 SVG).

Encodings are channel objects (alt.Y("net:Q")), never shorthand strings: altair turns each string
into a channel by hashing every schema class it has (about 10 ms each), which made these charts a
large share of the notebook's open; the specs are the same."""

from __future__ import annotations

import html

import altair as alt
import polars as pl

_FIXED, _BROKEN, _NET = "#2a9d8f", "#e76f51", "#264653"


def _repair_rounds(table: pl.DataFrame) -> pl.DataFrame:
    return table.filter(pl.col("round") > 0)


def cumulative_chart(table: pl.DataFrame, title: str = "Cumulative: it keeps going up") -> alt.LayerChart:
    """Fixes ever made (only rises) and cases right now (falls when a round breaks more), with intervals."""
    long = pl.concat(
        [
            table.select(
                "round",
                pl.lit(name).alias("measure"),
                pl.col(col).cast(pl.Float64).alias("value"),
                pl.col(f"{col}_low").alias("low"),
                pl.col(f"{col}_high").alias("high"),
            )
            for col, name in (
                ("cumulative_fixed", "fixes so far (cumulative)"),
                ("correct", "cases correct now"),
            )
        ]
    )
    base = alt.Chart(long).encode(
        x=alt.X("round:O", title="round", axis=alt.Axis(labelAngle=0)),
        color=alt.Color(
            "measure:N",
            scale=alt.Scale(range=[_FIXED, _NET]),
            legend=alt.Legend(orient="top", title=None, labelLimit=200),
        ),
    )
    band = base.mark_area(opacity=0.15).encode(y=alt.Y("low:Q"), y2=alt.Y2("high:Q"))
    line = base.mark_line(point=True).encode(
        y=alt.Y("value:Q", title="cases"),
        tooltip=[
            alt.Tooltip("round:O"),
            alt.Tooltip("measure:N"),
            alt.Tooltip("value:Q", format=".0f"),
            alt.Tooltip("low:Q", format=".1f"),
            alt.Tooltip("high:Q", format=".1f"),
        ],
    )
    return (band + line).properties(title=title, width=260, height=220)


def marginal_chart(table: pl.DataFrame, title: str = "Marginal: each round's net") -> alt.LayerChart:
    """Per round: fixed (up), broken (down) and net with its bootstrap interval."""
    rounds = _repair_rounds(table)
    bars = pl.concat(
        [
            rounds.select(
                "round",
                pl.lit("fixed").alias("kind"),
                pl.col("fixed").cast(pl.Float64).alias("count"),
            ),
            rounds.select(
                "round",
                pl.lit("broken").alias("kind"),
                (-pl.col("broken")).cast(pl.Float64).alias("count"),
            ),
        ]
    )
    # One y domain for bars and interval rules (y2 alone does not widen the scale).
    values = [
        0.0,
        *bars["count"].to_list(),
        *rounds["net_low"].drop_nulls().to_list(),
        *rounds["net_high"].drop_nulls().to_list(),
    ]
    domain = [min(values) - 1, max(values) + 1]
    bar = (
        alt.Chart(bars)
        .mark_bar(opacity=0.6)
        .encode(
            x=alt.X("round:O", title="round", axis=alt.Axis(labelAngle=0)),
            y=alt.Y(
                "count:Q",
                title="cases (broken shown below 0)",
                scale=alt.Scale(domain=domain, nice=False),
            ),
            color=alt.Color(
                "kind:N",
                scale=alt.Scale(domain=["fixed", "broken"], range=[_FIXED, _BROKEN]),
                legend=alt.Legend(orient="top", title=None),
            ),
            tooltip=[alt.Tooltip("round:O"), alt.Tooltip("kind:N"), alt.Tooltip("count:Q")],
        )
    )
    net = alt.Chart(rounds).encode(x=alt.X("round:O"))
    rule = net.mark_rule(color=_NET, strokeWidth=2).encode(y=alt.Y("net_low:Q"), y2=alt.Y2("net_high:Q"))
    point = net.mark_point(color=_NET, filled=True, size=70, shape="diamond").encode(
        y=alt.Y("net:Q"),
        tooltip=[
            alt.Tooltip("round:O"),
            alt.Tooltip("fixed:Q"),
            alt.Tooltip("broken:Q"),
            alt.Tooltip("net:Q"),
            alt.Tooltip("net_low:Q", format=".0f"),
            alt.Tooltip("net_high:Q", format=".0f"),
        ],
    )
    zero = alt.Chart(pl.DataFrame({"y": [0]})).mark_rule(color="#999", strokeDash=[4, 3]).encode(y=alt.Y("y:Q"))
    return (bar + zero + rule + point).properties(title=title, width=260, height=220)


def paradox_chart(table: pl.DataFrame, title: str = "") -> alt.HConcatChart:
    """The two views side by side: cumulative rising, marginal net falling below zero."""
    both = alt.hconcat(cumulative_chart(table), marginal_chart(table))
    return both.resolve_scale(color="independent").properties(title=title)


def rates_chart(table: pl.DataFrame, title: str = "Fix rate falls, break rate rises") -> alt.LayerChart:
    """Fix rate (of cases wrong going in) and break rate (of cases right going in), with intervals."""
    rounds = _repair_rounds(table)
    long = pl.concat(
        [
            rounds.select(
                "round",
                pl.lit(name).alias("rate"),
                pl.col(col).alias("value"),
                pl.col(f"{col}_low").alias("low"),
                pl.col(f"{col}_high").alias("high"),
            )
            for col, name in (("fix_rate", "fix rate"), ("break_rate", "break rate"))
        ]
    )
    base = alt.Chart(long).encode(
        x=alt.X("round:O", axis=alt.Axis(labelAngle=0)),
        color=alt.Color(
            "rate:N",
            scale=alt.Scale(domain=["fix rate", "break rate"], range=[_FIXED, _BROKEN]),
            legend=alt.Legend(orient="top", title=None),
        ),
    )
    return (
        base.mark_errorband(opacity=0.2).encode(y=alt.Y("low:Q", title="rate"), y2=alt.Y2("high:Q"))
        + base.mark_line(point=True).encode(
            y=alt.Y("value:Q"),
            tooltip=[alt.Tooltip("round:O"), alt.Tooltip("rate:N"), alt.Tooltip("value:Q", format=".3f")],
        )
    ).properties(title=title, width=260, height=200)


def transitions_svg(transitions: pl.DataFrame, round: int, title: str = "") -> str:
    """One round's 2x2 transition matrix as inline SVG: before (rows) -> after (columns), counts in
    the cells (fixed green, broken red). Drawn directly: four rectangles need no chart renderer."""
    counts = {
        (b, a): int(n)
        for b, a, n in transitions.filter(pl.col("round") == round).select("before", "after", "count").iter_rows()
    }
    colour = {("wrong", "right"): _FIXED, ("right", "wrong"): _BROKEN}
    states, cell, left, top = ("wrong", "right"), 80, 84, 62
    parts = [
        f'<text x="{left}" y="16" font-size="13" font-weight="bold">{html.escape(title or f"round {round}")}</text>',
        f'<text x="{left + cell}" y="34" font-size="11" text-anchor="middle">after the round</text>',
        f'<text x="14" y="{top + cell}" font-size="11" text-anchor="middle" '
        f'transform="rotate(-90 14 {top + cell})">before the round</text>',
    ]
    for j, after in enumerate(states):
        parts.append(
            f'<text x="{left + cell * j + cell // 2}" y="{top - 8}" font-size="11" text-anchor="middle">{after}</text>'
        )
    for i, before in enumerate(states):
        y = top + cell * i
        parts.append(f'<text x="{left - 8}" y="{y + cell // 2 + 4}" font-size="11" text-anchor="end">{before}</text>')
        for j, after in enumerate(states):
            x, n = left + cell * j, counts.get((before, after), 0)
            parts.append(
                f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="{colour.get((before, after), "#d9d9d9")}" '
                f'stroke="white"><title>{before} → {after}: {n}</title></rect>'
                f'<text x="{x + cell // 2}" y="{y + cell // 2 + 6}" font-size="18" font-weight="bold" '
                f'text-anchor="middle">{n}</text>'
            )
    width, height = left + 2 * cell + 4, top + 2 * cell + 4
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif">{"".join(parts)}</svg>'
    )


def slices_chart(per_slice: pl.DataFrame, by: str = "slice", title: str = "Net per round, by slice") -> alt.Chart:
    """Net per round for each slice, with intervals (resampling cases within the slice)."""
    rounds = _repair_rounds(per_slice)
    base = alt.Chart(rounds).encode(
        x=alt.X("round:O", axis=alt.Axis(labelAngle=0)),
        color=alt.Color(f"{by}:N", legend=alt.Legend(orient="top", title=None)),
        xOffset=alt.XOffset(f"{by}:N"),
    )
    return (
        base.mark_rule().encode(y=alt.Y("net_low:Q", title="net (fixed − broken)"), y2=alt.Y2("net_high:Q"))
        + base.mark_point(filled=True, size=60).encode(
            y=alt.Y("net:Q"), tooltip=[alt.Tooltip(t) for t in (f"{by}:N", "round:O", "fixed:Q", "broken:Q", "net:Q")]
        )
    ).properties(title=title, width=320, height=200)

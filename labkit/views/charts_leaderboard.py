"""Charts for the real judge data: the AlpacaEval 2 leaderboard, and the two length-control variants.

Every figure is computed in `labkit.experiments.judging.leaderboard` / `.lengthctl`; these only draw.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import altair as alt
import polars as pl

from labkit.experiments.judging.leaderboard import Leaderboard, LengthAnalysis, Line
from labkit.experiments.judging.simjudge import VariantError

__all__ = ["ROLES", "leaderboard_frame", "length_charts", "rank_moves_chart", "spread", "variant_chart"]

ROLES = (
    "NullModel (one constant reply)",
    "the baseline (judged against itself)",
    "gained most under LC",
    "lost most under LC",
    "other models",
)
_COLOURS = ("#d62728", "#444444", "#2ca02c", "#ff7f0e", "#9ecae1")


def leaderboard_frame(board: Leaderboard, a: LengthAnalysis, k: int = 5) -> pl.DataFrame:
    """One row per model: length, both win rates and ranks, and its role in the charts."""
    up, down = a.movers(k)
    role = {m.name: ROLES[2] for m in up} | {m.name: ROLES[3] for m in down}
    role |= {a.provenance.baseline: ROLES[1], a.null_model.name: ROLES[0]}
    moves = {m.name: m for m in a.moves}
    return pl.DataFrame(
        [
            {
                "model": e.name,
                "avg_length": e.avg_length,
                "raw": e.raw,
                "lc": e.lc,
                "raw_rank": moves[e.name].raw_rank,
                "lc_rank": moves[e.name].lc_rank,
                "places_gained": moves[e.name].up,
                "role": role.get(e.name, ROLES[4]),
            }
            for e in board.entries
        ]
    )


def _scatter(frame: pl.DataFrame, column: str, line: Line, title: str) -> alt.LayerChart:
    colour = alt.Color(
        "role:N",
        sort=list(ROLES),
        scale=alt.Scale(domain=list(ROLES), range=list(_COLOURS)),
        legend=alt.Legend(orient="bottom", title=None, columns=3, labelLimit=260),
    )
    base = alt.Chart(frame.sort("role", descending=True))
    points = base.mark_circle(opacity=0.85).encode(
        x=alt.X("avg_length:Q", title="average output length (characters)"),
        y=alt.Y(
            f"{column}:Q", title="win rate vs the baseline", axis=alt.Axis(format="%"), scale=alt.Scale(domain=(0, 1))
        ),
        color=colour,
        size=alt.SizeValue(90, condition={"test": alt.datum.role == ROLES[4], "value": 30}),
        tooltip=[
            alt.Tooltip("model"),
            alt.Tooltip("avg_length"),
            alt.Tooltip("raw:Q", format=".1%"),
            alt.Tooltip("lc:Q", format=".1%"),
            alt.Tooltip("raw_rank"),
            alt.Tooltip("lc_rank"),
        ],
    )
    lengths = frame["avg_length"].to_list()
    lo, hi = float(min(lengths)), float(max(lengths))
    fit = (
        alt.Chart(pl.DataFrame({"avg_length": [lo, hi], column: [line.at(lo), line.at(hi)]}))
        .mark_line(color="black", strokeDash=[5, 3], clip=True)
        .encode(x=alt.X("avg_length:Q"), y=alt.Y(f"{column}:Q"))
    )
    label = (
        base.transform_filter(alt.datum.role == ROLES[0])
        .mark_text(align="left", dx=8, fontWeight="bold")
        .encode(x=alt.X("avg_length:Q"), y=alt.Y(f"{column}:Q"), text=alt.Text("model:N"))
    )
    return cast(
        alt.LayerChart,
        alt.layer(points, fit, label).properties(
            title=alt.TitleParams(
                title,
                subtitle=f"r = {line.r} (95% bootstrap over models); "
                f"line: {line.slope_per_1000:+.1%} per 1000 characters",
            ),
            width=420,
            height=320,
        ),
    )


def length_charts(frame: pl.DataFrame, a: LengthAnalysis) -> tuple[alt.LayerChart, alt.LayerChart]:
    """Average length against the raw and the length-controlled win rate, with least-squares lines."""
    return (_scatter(frame, "raw", a.raw, "Raw win rate"), _scatter(frame, "lc", a.lc, "Length-controlled win rate"))


def spread(ys: Sequence[float], gap: float, lo: float, hi: float) -> list[float]:
    """Label positions near `ys` (pixels, in order given) at least `gap` apart, within [lo, hi].

    Labels that would collide are grouped and each group is centred on its members' points,
    then pushed apart and back inside the plot. Positions keep the order of the points.
    """
    order = sorted(range(len(ys)), key=lambda i: ys[i])
    groups: list[tuple[float, list[int]]] = []  # (first label's position, members in order)
    for i in order:
        groups.append((ys[i], [i]))
        while len(groups) > 1 and groups[-2][0] + gap * len(groups[-2][1]) > groups[-1][0]:
            members = groups[-2][1] + groups[-1][1]
            centre = sum(ys[j] for j in members) / len(members)
            groups[-2:] = [(centre - gap * (len(members) - 1) / 2, members)]
    placed = [start + gap * k for start, members in groups for k in range(len(members))]
    for k in range(len(placed)):  # inside the plot, still `gap` apart
        placed[k] = max(placed[k], lo, placed[k - 1] + gap if k else lo)
    for k in reversed(range(len(placed))):
        placed[k] = min(placed[k], hi, placed[k + 1] - gap if k + 1 < len(placed) else hi)
    out = [0.0] * len(ys)
    for k, i in enumerate(order):
        out[i] = placed[k]
    return out


_MOVES_HEIGHT, _LABEL_SIZE = 320, 10


def rank_moves_chart(frame: pl.DataFrame) -> alt.LayerChart:
    """Rank under raw and under LC win rate for the biggest movers and the null model (1 = top).

    The model names on the right sit beside their points, spread apart where ranks are close
    (`spread`), so no two names overlap.
    """
    shown = frame.filter(pl.col("role").is_in(list(ROLES[:4])))
    long = pl.concat(
        [
            shown.select("model", "role", pl.lit("raw win rate").alias("ranking"), pl.col("raw_rank").alias("rank")),
            shown.select(
                "model", "role", pl.lit("length-controlled").alias("ranking"), pl.col("lc_rank").alias("rank")
            ),
        ]
    )
    colour = alt.Color(
        "role:N", sort=list(ROLES), scale=alt.Scale(domain=list(ROLES), range=list(_COLOURS)), legend=None
    )
    x = alt.X("ranking:N", sort=["raw win rate", "length-controlled"], title=None, axis=alt.Axis(labelAngle=0))
    top, bottom = 1, int(frame.height)
    y = alt.Y("rank:Q", scale=alt.Scale(reverse=True, domain=(top, bottom)), title="rank (1 = top)")
    lines = (
        alt.Chart(long)
        .mark_line(point=True)
        .encode(
            x=x,
            y=y,
            color=colour,
            detail=alt.Detail("model:N"),
            tooltip=[alt.Tooltip(t) for t in ("model", "ranking", "rank")],
        )
    )
    right = long.filter(pl.col("ranking") == "length-controlled")
    at = [(r - top) / max(bottom - top, 1) * _MOVES_HEIGHT for r in right["rank"].to_list()]
    right = right.with_columns(label_y=pl.Series(spread(at, _LABEL_SIZE + 2, 0, _MOVES_HEIGHT)))
    labels = (
        alt.Chart(right)
        .mark_text(align="left", dx=6, fontSize=_LABEL_SIZE)
        .encode(x=x, y=alt.Y("label_y:Q", scale=None, axis=None), text=alt.Text("model:N"), color=colour)
    )
    return cast(
        alt.LayerChart,
        alt.layer(lines, labels).properties(
            title="Who moves between the two rankings", width=300, height=_MOVES_HEIGHT
        ),
    )


def variant_chart(errors: Sequence[VariantError]) -> alt.Chart:
    """RMSE of each length-control variant from the simulated judge's length-free win rates."""
    rows = [
        {"length scale": f"{e.length_scale:.0f} chars", "variant": name, "rmse": value}
        for e in errors
        for name, value in (("shared φ (labkit)", e.shared), ("per-model φ + L1 CV (AlpacaEval)", e.alpacaeval))
    ]
    return (
        alt.Chart(pl.DataFrame(rows))
        .mark_bar()
        .encode(
            x=alt.X("length scale:N", title="the simulated judge's length scale", axis=alt.Axis(labelAngle=0)),
            xOffset=alt.XOffset("variant:N"),
            y=alt.Y("rmse:Q", title="RMSE from the length-free win rate"),
            color=alt.Color("variant:N", legend=alt.Legend(orient="top", title=None, labelLimit=300)),
            tooltip=[alt.Tooltip("variant"), alt.Tooltip("length scale"), alt.Tooltip("rmse:Q", format=".3f")],
        )
        .properties(title="Simulated judge: which length control lands nearer the truth", width=380, height=260)
    )

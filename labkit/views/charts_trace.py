"""Altair charts of a loop trace."""

from __future__ import annotations

import altair as alt
import polars as pl


def scores_chart(scores: pl.DataFrame, step: int | None = None, title: str = "") -> alt.Chart:
    """Passed tests per display group at each step; the step being shown is opaque, the rest faded."""
    data = scores.with_columns(
        (pl.col("step").cast(pl.Utf8) + " · " + pl.col("decision")).alias("step · decision"),
        (pl.col("step") == (step if step is not None else -1)).alias("shown"),
    )
    top = max([int(t) for t in scores.get_column("total").to_list()] or [1])
    base = alt.Chart(data)  # altair >= 5.4 reads polars frames directly
    return (
        base.mark_bar()
        .encode(
            # one word per line under each bar pair ("1", "keep", "investigating"): labels of
            # neighbouring steps never run into each other, however long the decision
            x=alt.X(
                "step · decision:N",
                sort=None,
                title="step · decision",
                axis=alt.Axis(labelAngle=0, labelExpr="split(replace(datum.label, ' · ', ' '), ' ')"),
            ),
            xOffset="group:N",
            y=alt.Y(
                "passed:Q",
                title="tests passing",
                scale=alt.Scale(domain=[0, top]),
            ),
            color=alt.Color("group:N", legend=alt.Legend(orient="top", title=None)),
            opacity=alt.condition("datum.shown", alt.value(1.0), alt.value(0.35))
            if step is not None
            else alt.value(1.0),
            tooltip=["step:Q", "group:N", "passed:Q", "total:Q", "decision:N", "cost_units:Q"],
        )
        .properties(title=title, width=alt.Step(40), height=180)
    )

"""Altair charts of a loop trace."""

from __future__ import annotations

import altair as alt
import polars as pl


def scores_chart(scores: pl.DataFrame, step: int | None = None, title: str = "") -> alt.Chart:
    """Passed tests per display group at each step; the step being shown is opaque, the rest faded.

    Steps are counted from 1, as the stepper counts them (step 1 is the start); the axis of
    tests has whole-number ticks only; the chart is wide enough to read on a projector.
    """
    data = scores.with_columns(
        ((pl.col("step") + 1).cast(pl.Utf8) + " · " + pl.col("decision")).alias("step · decision"),
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
                title="step (as the stepper counts) · decision",
                axis=alt.Axis(labelAngle=0, labelExpr="split(replace(datum.label, ' · ', ' '), ' ')"),
            ),
            xOffset="group:N",
            y=alt.Y(
                "passed:Q",
                title="tests passing",
                scale=alt.Scale(domain=[0, top]),
                axis=alt.Axis(values=list(range(top + 1)), format="d", tickMinStep=1),
            ),
            color=alt.Color("group:N", legend=alt.Legend(orient="top", title=None)),
            opacity=alt.condition("datum.shown", alt.value(1.0), alt.value(0.35))
            if step is not None
            else alt.value(1.0),
            tooltip=["step · decision:N", "group:N", "passed:Q", "total:Q", "decision:N", "cost_units:Q"],
        )
        .properties(title=title, width=max(480, 120 * scores["step"].n_unique()), height=220)
    )

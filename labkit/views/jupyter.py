"""JupyterLab views: the round stepper (every step's card precomputed, shown by the widget itself)
and charts as offline SVG."""

from __future__ import annotations

from typing import TYPE_CHECKING

from labkit.views.pages import chart_svg
from labkit.views.report import step_labels
from labkit.views.step_card import trace_pages
from labkit.views.stepper import Stepper

__all__ = ["StaticChart", "static_chart", "trace_browser"]

if TYPE_CHECKING:
    import altair as alt
    import polars as pl

    from labkit.grading.acceptance import AcceptanceSuite
    from labkit.loop.engine import Trace


def trace_browser(
    trace: Trace,
    suite: AcceptanceSuite | None = None,
    ledger: pl.DataFrame | None = None,
    start: int = 0,
) -> Stepper:
    """Step through a finished trace. Stepping swaps precomputed HTML in the browser; nothing reruns."""
    return Stepper(
        len(trace.rounds) + 1,
        step_labels(trace),
        index=start,
        unit="step",
        pages=trace_pages(trace, suite, ledger),
    )


class StaticChart:
    """An altair chart rendered once to SVG by vl-convert: shows in JupyterLab with no network.

    (altair's default Jupyter renderer loads vega from a CDN; offline that fails.)
    """

    def __init__(self, chart: alt.TopLevelMixin) -> None:
        self.svg = chart_svg(chart)

    def _repr_svg_(self) -> str:
        return self.svg


def static_chart(chart: alt.TopLevelMixin) -> StaticChart:
    """`chart` as offline SVG for a JupyterLab output."""
    return StaticChart(chart)

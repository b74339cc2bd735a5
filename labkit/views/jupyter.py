"""The round stepper for JupyterLab: every step's card precomputed and shown by the widget itself."""

from __future__ import annotations

from typing import TYPE_CHECKING

from labkit.views.report import step_labels
from labkit.views.step_card import trace_pages
from labkit.views.stepper import Stepper

if TYPE_CHECKING:
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

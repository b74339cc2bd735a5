"""The round stepper for JupyterLab: a Stepper above an HTML card, all steps precomputed."""

from __future__ import annotations

from typing import TYPE_CHECKING

import ipywidgets as widgets

from labkit.report import step_labels, step_view
from labkit.views.step_card import step_html
from labkit.views.stepper import Stepper

if TYPE_CHECKING:
    from labkit.acceptance import AcceptanceSuite
    from labkit.loop import Trace


def trace_browser(
    trace: Trace, suite: AcceptanceSuite | None = None, start: int = 0
) -> widgets.VBox:
    """Step through a finished trace. Moving the stepper only swaps precomputed HTML."""
    cards = [step_html(step_view(trace, i, suite)) for i in range(len(trace.rounds) + 1)]
    stepper = Stepper(len(cards), step_labels(trace), index=start)
    card = widgets.HTML(cards[start])

    def show(change: dict[str, object]) -> None:
        card.value = cards[int(change["new"])]  # type: ignore[call-overload]

    stepper.observe(show, names="index")
    box = widgets.VBox([stepper, card])
    box.stepper = stepper  # handy for tests and scripted stepping
    box.card = card
    return box

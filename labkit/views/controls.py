"""One spec per notebook control, built into a marimo or an ipywidgets widget by the notebook.

A worked example's sliders exist once (range, default, label) so its marimo notebook and its
JupyterLab twin show the same controls. `ipywidget` builds the JupyterLab one; marimo cells
build theirs from the same fields (`mo.ui.slider(c.start, c.stop, value=c.value, ...)`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Slider", "ipywidget"]


@dataclass(frozen=True)
class Slider:
    """A numeric control: integer when every field is an int, else float."""

    start: float
    stop: float
    value: float
    step: float
    label: str

    @property
    def integer(self) -> bool:
        return all(isinstance(x, int) for x in (self.start, self.stop, self.value, self.step))


def ipywidget(spec: Slider) -> Any:
    """The JupyterLab slider for `spec` (updates when released, so a rerun is not fired per pixel)."""
    import ipywidgets as w

    cls = w.IntSlider if spec.integer else w.FloatSlider
    return cls(
        min=spec.start,
        max=spec.stop,
        value=spec.value,
        step=spec.step,
        description=spec.label,
        continuous_update=False,
        style={"description_width": "initial"},
        layout=w.Layout(width="460px"),
    )

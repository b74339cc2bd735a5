"""A round stepper that works in marimo (wrap it: `mo.ui.anywidget(Stepper(...))`) and in JupyterLab.

It holds only `index`: which precomputed round to show. Stepping never recomputes a loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anywidget
import traitlets

_HERE = Path(__file__).parent


class Stepper(anywidget.AnyWidget):
    """Previous / next / slider / arrow keys over `count` items; `index` is the one shown.

    With `pages` (one HTML string per item) the widget shows the chosen page itself, in the
    browser: no kernel round trip per step.
    """

    _esm = _HERE / "stepper.js"
    _css = _HERE / "stepper.css"

    index = traitlets.Int(0).tag(sync=True)
    count = traitlets.Int(1).tag(sync=True)
    labels = traitlets.List(traitlets.Unicode(), default_value=[]).tag(sync=True)
    unit = traitlets.Unicode("round").tag(sync=True)
    pages = traitlets.List(traitlets.Unicode(), default_value=[]).tag(sync=True)

    def __init__(
        self,
        count: int,
        labels: Sequence[str] | None = None,
        *,
        index: int = 0,
        unit: str = "round",
        pages: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> None:
        if count < 1:
            raise ValueError(f"Stepper needs at least one item to show, got count={count}")
        if labels is not None and len(labels) != count:
            raise ValueError(f"Stepper got {len(labels)} labels for {count} items")
        if pages is not None and len(pages) != count:
            raise ValueError(f"Stepper got {len(pages)} pages for {count} items")
        if not 0 <= index < count:
            raise ValueError(f"Stepper index {index} is outside 0..{count - 1}")
        super().__init__(
            count=count,
            labels=list(labels or []),
            index=index,
            unit=unit,
            pages=list(pages or []),
            **kwargs,
        )

    @traitlets.validate("index")
    def _clamp(self, proposal: dict[str, Any]) -> int:
        return max(0, min(self.count - 1, int(proposal["value"])))

    def step(self, delta: int) -> int:
        """Move by `delta` (clamped), as the buttons do; returns the new index."""
        self.index = self.index + delta
        return self.index

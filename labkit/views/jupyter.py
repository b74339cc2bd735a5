"""JupyterLab views: the round stepper (every step's card precomputed, shown by the widget itself)
and charts as offline SVG."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

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
    """An altair chart rendered to SVG by vl-convert: shows in JupyterLab, and in the saved
    .ipynb, with no network. (altair's default Jupyter renderer loads vega from a CDN; offline
    that fails, and a saved notebook would show nothing.)

    Each spec is rendered once: kept for the session, and under `<build>/chart-svg/` by the
    digest of the spec (data included) and vl-convert's version, so a reopened twin, or the same
    chart in another kernel, skips vl-convert (~0.4 s CPU to start it, ~0.05 s a chart).
    """

    def __init__(self, chart: alt.TopLevelMixin) -> None:
        self.svg = _svg(chart.to_dict())  # eager: a chart that cannot render fails its cell

    def _repr_svg_(self) -> str:
        return self.svg


def static_chart(chart: alt.TopLevelMixin) -> StaticChart:
    """`chart` as offline SVG for a JupyterLab output."""
    return StaticChart(chart)


_SESSION: dict[str, str] = {}  # spec digest -> SVG, this process's latest _SESSION_KEEP renders
_SESSION_KEEP = 64
_KEEP = 400  # SVGs kept on disk (a chart is 5–60 KB): slider moves make new specs, so the oldest go


def _prune(folder: Path) -> None:
    """Keep the newest _KEEP/2 SVGs once more than _KEEP are stored."""
    files = list(folder.glob("*.svg"))
    if len(files) > _KEEP:
        for f in sorted(files, key=lambda f: f.stat().st_mtime)[: len(files) - _KEEP // 2]:
            f.unlink(missing_ok=True)


def _svg_folder() -> Path | None:
    """<$LABKIT_BUILD or the checkout's build/>/chart-svg; None for an installed package (memory only)."""
    from labkit.core.paths import CHECKOUT, INSTALLED

    build = os.environ.get("LABKIT_BUILD", "").strip()
    if build:
        return Path(build).expanduser() / "chart-svg"
    return CHECKOUT.parent / "build" / "chart-svg" if CHECKOUT.is_dir() and not INSTALLED.is_dir() else None


def _svg(spec: dict[str, object]) -> str:
    import vl_convert as vlc  # cheap: its JavaScript runtime starts on the first conversion

    version = vlc.__version__  # type: ignore[attr-defined]  # set by the package, absent from its stubs
    key = hashlib.sha256(f"{version}\n{json.dumps(spec, sort_keys=True)}".encode()).hexdigest()
    if key in _SESSION:
        return _SESSION[key]
    folder = _svg_folder()
    stored = folder / f"{key}.svg" if folder else None
    try:
        svg = stored.read_text() if stored else ""
    except OSError:
        svg = ""
    if not (svg.startswith("<svg") and svg.rstrip().endswith("</svg>")):
        svg = str(vlc.vegalite_to_svg(spec))
        if stored:
            try:  # written whole then renamed: a concurrent reader never sees half a file
                stored.parent.mkdir(parents=True, exist_ok=True)
                part = stored.with_suffix(f".{os.getpid()}.part")
                part.write_text(svg)
                part.replace(stored)
                _prune(stored.parent)
            except OSError:
                pass  # a read-only build folder: this session's memory still holds it
    if len(_SESSION) >= _SESSION_KEEP:
        _SESSION.pop(next(iter(_SESSION)))  # the oldest
    _SESSION[key] = svg
    return svg

"""Static HTML pages for a Stepper: charts rendered to SVG once, so stepping needs no kernel."""

from __future__ import annotations

import altair as alt


def chart_svg(chart: alt.TopLevelMixin) -> str:
    """The chart as inline SVG (rendered by vl-convert, offline)."""
    import vl_convert as vlc

    return str(vlc.vegalite_to_svg(chart.to_dict()))


def beside(left: str, right: str) -> str:
    """HTML `left` (e.g. an inline SVG) on the left and HTML `right` on the right, as one page."""
    return f"<div style=\"display:flex;gap:1.5em;align-items:flex-start\"><div>{left}</div><div style='flex:1'>{right}</div></div>"


def side_by_side(chart: alt.TopLevelMixin, html: str) -> str:
    """A chart (rendered to SVG) on the left and HTML on the right, as one page."""
    return beside(chart_svg(chart), html)

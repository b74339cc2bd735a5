"""Static HTML pages for a Stepper: charts rendered to SVG once, so stepping needs no kernel."""

from __future__ import annotations

import altair as alt


def chart_svg(chart: alt.TopLevelMixin) -> str:
    """The chart as inline SVG (rendered by vl-convert, offline)."""
    import vl_convert as vlc

    return str(vlc.vegalite_to_svg(chart.to_dict()))


def side_by_side(chart: alt.TopLevelMixin, html: str) -> str:
    """A chart on the left and HTML on the right, as one page."""
    return (
        '<div style="display:flex;gap:1.5em;align-items:flex-start">'
        f"<div>{chart_svg(chart)}</div><div style='flex:1'>{html}</div></div>"
    )

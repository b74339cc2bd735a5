"""The diminishing-returns views built on the constructed chapter example say so where they are
shown (the rates chart, the per-slice chart and table), in both twins, not only in an earlier cell."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from labkit.loop.engine import accounting
from labkit.views import charts_rounds as charts
from labkit.views import diminishing as page

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def _cells(name: str) -> list[str]:
    if name.endswith(".ipynb"):
        nb = json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))
        return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    return (NOTEBOOKS / name).read_text(encoding="utf-8").split("@app.cell")


@pytest.mark.parametrize("name", ["diminishing_returns.py", "diminishing_returns.ipynb"])
def test_the_constructed_views_carry_their_label_in_the_same_cell(name: str) -> None:
    cells = _cells(name)
    rates = [c for c in cells if "charts.rates_chart(table" in c]
    slices = [c for c in cells if "charts.slices_chart(" in c]
    assert rates and slices
    for cell in rates + slices:
        assert "page.CONSTRUCTED" in cell
    assert all("page.RATES_TITLE" in c for c in rates) and all("page.SLICES_TITLE" in c for c in slices)


def test_the_chart_titles_say_constructed() -> None:
    chapter = accounting.read_rounds(accounting.CHAPTER_EXAMPLE)
    rates = charts.rates_chart(accounting.per_round(chapter, resamples=50), title=page.RATES_TITLE).to_dict()
    slices = charts.slices_chart(accounting.per_slice(chapter, resamples=50), title=page.SLICES_TITLE).to_dict()
    for spec in (rates, slices):
        assert "constructed" in str(spec["title"]) and "not a run" in str(spec["title"])
    assert "Constructed data" in page.CONSTRUCTED

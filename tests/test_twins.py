"""JupyterLab twins: one source of truth with their marimo notebook, charts that need no network."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
SHARED = {
    "cache_isolation": "labkit.views.cache_page",
    "diminishing_returns": "labkit.views.diminishing",
    "judge_bias": "labkit.views.judge_page",
    "lessons": "labkit.views.lessons",
    "long_projects": "labkit.views.long_projects",
    "memory": "labkit.views.memory_pages",
    "reflection_worth_it": "labkit.views.arms_page",
}


def _ipynb_code(stem: str) -> str:
    nb = json.loads((NOTEBOOKS / f"{stem}.ipynb").read_text())
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")


@pytest.mark.parametrize("stem", sorted(SHARED))
def test_both_twins_build_their_views_from_one_labkit_module(stem: str) -> None:
    module = SHARED[stem]
    package, name = module.rsplit(".", 1)
    line = f"from {package} import {name} as page"
    assert line in (NOTEBOOKS / f"{stem}.py").read_text()
    assert line in _ipynb_code(stem)


def test_static_chart_is_svg_with_no_network_reference() -> None:
    import altair as alt
    import polars as pl

    from labkit.views.jupyter import static_chart

    chart = alt.Chart(pl.DataFrame({"x": [1, 2], "y": [3, 4]})).mark_line().encode(x="x:Q", y="y:Q")
    svg = static_chart(chart)._repr_svg_()
    assert svg.lstrip().startswith("<svg") and "http" not in svg.replace("http://www.w3.org", "")


def test_slider_specs_build_the_matching_ipywidget() -> None:
    import ipywidgets as w

    from labkit.views.controls import ipywidget
    from labkit.views.diminishing import REPAIR

    rounds, p_fix = ipywidget(REPAIR["n_rounds"]), ipywidget(REPAIR["p_fix"])
    assert isinstance(rounds, w.IntSlider) and (rounds.min, rounds.max, rounds.value) == (1, 6, 4)
    assert isinstance(p_fix, w.FloatSlider) and p_fix.value == 0.6 and p_fix.description == REPAIR["p_fix"].label


# cache_isolation's sections, each by the shared labkit.views.cache_page function both twins call
CACHE_SECTIONS = {
    "storyline picker": ("page.storyline_options()", "page.STORYLINE_LABEL", "page.run_storyline("),
    "downloads": ("page.downloads(",),
    "ask a real model": (
        "page.REAL_MODEL)",
        "page.real_model_button()",
        "page.real_model_expectation()",
        "page.ask_real_model(on_progress=",
        "page.real_model_md(",
    ),
    "try your own patch": ("page.yours_html(",),
}


@pytest.mark.parametrize("section", sorted(CACHE_SECTIONS))
def test_cache_isolation_twins_have_the_same_sections(section: str) -> None:
    marimo, jupyter = (NOTEBOOKS / "cache_isolation.py").read_text(), _ipynb_code("cache_isolation")
    for call in CACHE_SECTIONS[section]:
        assert call in marimo, f"marimo twin lacks {section}: {call}"
        assert call in jupyter, f"JupyterLab twin lacks {section}: {call}"


def test_cache_isolation_jupyter_twin_asks_a_real_model_only_when_pressed() -> None:
    # the call sits inside the button's handler, never at a cell's top level (not on open)
    code = _ipynb_code("cache_isolation")
    calls = [line for line in code.splitlines() if "page.ask_real_model(" in line]
    assert calls and all(line.startswith(" ") for line in calls), calls
    assert ".on_click(ask)" in code


# judge_bias's "Real judges (LLMBar)" section: both twins build it from labkit.views.judge_llmbar
LLMBAR_CALLS = ("from labkit.views import judge_llmbar as llmbar_page", "llmbar_page.INTRO", "llmbar_page.STRATEGY",
                "llmbar_page.scores_for(", "llmbar_page.accuracy_chart(", "llmbar_page.consistency_chart(",
                "llmbar_page.shift_chart(", "llmbar_page.claim_md(", "llmbar_page.claim_people()",
                "llmbar_page.table_people(", "llmbar_page.FLIP_JUDGE", "llmbar_page.flip_stepper(",
                "llmbar_page.flips_md(")  # fmt: skip


@pytest.mark.parametrize("call", LLMBAR_CALLS)
def test_judge_bias_twins_have_the_same_llmbar_section(call: str) -> None:
    assert call in (NOTEBOOKS / "judge_bias.py").read_text(), f"marimo twin lacks {call}"
    assert call in _ipynb_code("judge_bias"), f"JupyterLab twin lacks {call}"

import pytest

from labkit.views.stepper import Stepper


def test_stepper_clamps_and_steps():
    s = Stepper(3, ["a", "b", "c"])
    assert s.step(1) == 1 and s.step(5) == 2 and s.step(-9) == 0
    s.index = 7
    assert s.index == 2


def test_stepper_rejects_bad_shapes():
    with pytest.raises(ValueError, match="1 pages for 2"):
        Stepper(2, pages=["<p>a</p>"])
    with pytest.raises(ValueError, match="2 labels for 3"):
        Stepper(3, ["a", "b"])
    with pytest.raises(ValueError, match="at least one"):
        Stepper(0)


def test_jupyter_browser_swaps_precomputed_cards():
    from test_report import CASE, TwoSteps

    from labkit.grading.validator import Validator
    from labkit.loop.engine import run_loop
    from labkit.views.jupyter import trace_browser

    trace = run_loop(CASE.start, CASE.suite, Validator(), TwoSteps())
    stepper = trace_browser(trace, CASE.suite)
    pages = stepper.pages
    assert len(pages) == 3 and "Start" in pages[0]
    assert "Round 1: roll back" in pages[1] and "breaks protective tests" in pages[1]
    assert "Round 2: keep" in pages[2]
    assert all("scripted reflector" in p for p in pages)  # simulated reflectors are labelled
    assert stepper.step(1) == 1  # stepping moves the index only; the pages were computed once


def test_pages_render_charts_to_static_svg():
    import altair as alt
    import polars as pl

    from labkit.views.pages import side_by_side

    chart = alt.Chart(pl.DataFrame({"x": [1, 2], "y": [3, 4]})).mark_bar().encode(x="x:O", y="y:Q")
    page = side_by_side(chart, "<p>who moved</p>")
    assert "<svg" in page and "who moved" in page

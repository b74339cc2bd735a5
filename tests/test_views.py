import pytest

from labkit.views.stepper import Stepper


def test_stepper_clamps_and_steps():
    s = Stepper(3, ["a", "b", "c"])
    assert s.step(1) == 1 and s.step(5) == 2 and s.step(-9) == 0
    s.index = 7
    assert s.index == 2


def test_stepper_rejects_bad_shapes():
    with pytest.raises(ValueError, match="2 labels for 3"):
        Stepper(3, ["a", "b"])
    with pytest.raises(ValueError, match="at least one"):
        Stepper(0)


def test_jupyter_browser_swaps_precomputed_cards():
    from test_report import CASE, TwoSteps

    from labkit.loop import run_loop
    from labkit.validator import Validator
    from labkit.views.jupyter import trace_browser

    trace = run_loop(CASE.start, CASE.suite, Validator(), TwoSteps())
    box = trace_browser(trace, CASE.suite)
    assert "Start" in box.card.value
    box.stepper.step(1)
    assert "Round 1: roll back" in box.card.value and "breaks protective tests" in box.card.value
    box.stepper.step(1)
    assert "Round 2: keep" in box.card.value
    assert "scripted reflector" in box.card.value  # simulated reflectors are labelled

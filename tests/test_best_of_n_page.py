"""The diminishing-returns notebook's best-of-N section (SIMULATED): the page's grid shows a coin-flip
selector gaining nothing from N while the ceiling rises, and correlation capping a good verifier's gain."""

from __future__ import annotations

import pytest

from labkit.experiments.best_of_n import BestOfN
from labkit.views import best_of_n_page as page


@pytest.fixture(scope="module")
def g() -> dict[tuple[str, float], BestOfN]:
    return page.grid()


def test_a_coin_flip_keeps_the_base_rate_while_good_samples_were_there(
    g: dict[tuple[str, float], BestOfN],
) -> None:
    for rho in page.RHOS:
        coin = g["coin flip", rho]
        assert abs(coin.gain()) < 0.03  # selected correct stays at the base rate, whatever N
    assert g["coin flip", 0.0].ceiling[-1] > 0.95 and g["coin flip", 0.5].ceiling[-1] > 0.75


def test_correlation_caps_what_a_good_verifier_gains_from_n(
    g: dict[tuple[str, float], BestOfN],
) -> None:
    free, tied = g["good verifier", 0.0], g["good verifier", 0.9]
    assert free.gain() > 0.6 and tied.gain() < 0.25
    assert tied.selected[-1] <= tied.ceiling[-1] < 0.6  # the samples fail together: nothing to pick
    assert tied.cost_per_correct[-1] > 1.5 * free.cost_per_correct[-1]
    assert g["noisy reviewer", 0.0].gain() < free.gain()  # a worse selector buys less of the same ceiling


def test_the_section_says_simulated_and_shows_every_setting(
    g: dict[tuple[str, float], BestOfN],
) -> None:
    html = page.best_of_n_html(g)
    assert "SIMULATED" in page.BEST_OF_N and "SIMULATED" in html
    assert all(name in html for name in page.SELECTORS)
    chart = page.best_of_n_chart(g).to_dict()
    assert "SIMULATED" in str(chart["title"])

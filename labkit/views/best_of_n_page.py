"""The diminishing-returns notebook's best-of-N section, built once for both twins: N samples from
one prompt and a selector, when the samples are correlated and when the selector is a coin.

SIMULATED (`labkit.experiments.best_of_n.simulate`: a Gaussian copula for correlated correctness
and a noisy selector score); a grid of settings computed as the page opens (numpy, milliseconds).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from labkit.experiments.best_of_n import BestOfN, simulate
from labkit.views.tables import frame_html

if TYPE_CHECKING:
    import altair as alt

__all__ = ["BEST_OF_N", "NS", "RHOS", "SELECTORS", "best_of_n_chart", "best_of_n_html", "grid"]

NS = (1, 2, 4, 8, 16)
RHOS = (0.0, 0.5, 0.9)  # how strongly one task's samples succeed or fail together
SELECTORS = {
    "coin flip": 0.0,
    "noisy reviewer": 1.0,
    "good verifier": 3.0,
}  # selector signal (score = signal·correct + noise)
BASE_RATE = 0.3

BEST_OF_N = f"""## Best-of-N: more samples buy little when they fail together or nobody can pick (SIMULATED)

Sampling N answers and picking one is search too, and it pays N generations and N checks.
What it buys depends on two things the budget does not show: how **correlated** the samples
are (they share the prompt, so they tend to fail together) and how good the **selector** is.
Here each sample is correct with probability {BASE_RATE} (correlation rho within a task), and a
selector scores every sample as *signal × correct + noise* and keeps the top one: signal 0
is a **coin flip**, signal 3 a good external verifier. **Simulated** (labkit.experiments.best_of_n,
4,000 tasks per setting, seed 0); "any correct" is the ceiling a perfect selector would reach."""


def grid(tasks: int = 4000, seed: int = 0) -> dict[tuple[str, float], BestOfN]:
    """Every (selector, rho) of the page, simulated with the same seed."""
    return {
        (name, rho): simulate(NS, p=BASE_RATE, rho=rho, signal=signal, tasks=tasks, seed=seed)
        for name, signal in SELECTORS.items()
        for rho in RHOS
    }


def _long(g: dict[tuple[str, float], BestOfN]) -> pl.DataFrame:
    rows = []
    for (name, rho), r in g.items():
        for n, sel, ceil in zip(r.ns, r.selected, r.ceiling, strict=True):
            rows.append(
                {
                    "selector": name,
                    "rho": f"rho = {rho:g}",
                    "N": n,
                    "selected correct": sel,
                    "any correct": ceil,
                }
            )
    return pl.DataFrame(rows)


def best_of_n_chart(g: dict[tuple[str, float], BestOfN]) -> alt.FacetChart:
    """Share of tasks whose selected sample is correct vs N (solid), and the ceiling (dashed), per selector."""
    import altair as alt

    data = _long(g).unpivot(index=["selector", "rho", "N"], variable_name="what", value_name="share")
    base = alt.Chart(data).encode(
        x=alt.X("N:Q", scale=alt.Scale(type="log", base=2), axis=alt.Axis(values=list(NS)), title="N samples"),
        y=alt.Y("share:Q", scale=alt.Scale(domain=[0, 1]), title="share of tasks"),
        color=alt.Color("rho:N", legend=alt.Legend(orient="top", title=None)),
        strokeDash=alt.StrokeDash(
            "what:N", sort=["selected correct", "any correct"], legend=alt.Legend(orient="top", title=None)
        ),
        tooltip=[*map(alt.Tooltip, ["selector:N", "rho:N", "N:Q", "what:N"]), alt.Tooltip("share:Q", format=".3f")],
    )
    return (
        base.mark_line(point=True)
        .properties(width=170, height=170)
        .facet(column=alt.Column("selector:N", sort=list(SELECTORS), title=None))
        .properties(title="SIMULATED best-of-N: selected correct (solid) vs any correct (dashed)")
    )


def best_of_n_html(g: dict[tuple[str, float], BestOfN]) -> str:
    """Per selector and rho: selected correct at N = 1 and at the largest N, the gain, the ceiling
    at the largest N, and the cost per correct answer there (N generations + N checks per task)."""
    big = NS[-1]
    rows = [
        {
            "selector": name,
            "rho": f"{rho:g}",
            "selected correct, N = 1": round(r.selected[0], 3),
            f"selected correct, N = {big}": round(r.selected[-1], 3),
            "gain": round(r.gain(), 3),
            f"any correct, N = {big}": round(r.ceiling[-1], 3),
            f"cost units per correct, N = {big}": round(r.cost_per_correct[-1]),
        }
        for (name, rho), r in g.items()
    ]
    return "".join(
        [
            f"<p><b>SIMULATED: what N = {big} buys over N = 1</b> (base rate {BASE_RATE}; cost: 1 unit per generation "
            "and 1 per check)</p>",
            frame_html(pl.DataFrame(rows)),
            "<p style='font-size:90%'>A coin flip keeps the base rate at every N although good samples were there "
            "(the ceiling rises); with a good verifier, correlation caps the gain, and the cost per correct answer "
            "grows with N either way.</p>",
        ]
    )

"""The batch incidents and conditional subsets section of reflection_worth_it (seed 002 §4).

Both twins call these; they read the committed recording (`labkit.experiments.arms.incidents`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from labkit.experiments.arms.incidents import recorded
from labkit.views.arms_page import arm_name
from labkit.views.tables import frame_html

__all__ = ["INTRO", "batches_html", "mechanism_html", "summary_md"]

INTRO = """## Batch incidents and conditional subsets

Seed 002 §4. A global environment incident can pause a whole batch and void its conclusions by a
rule registered before the batch began; a new batch starts, and the voided batch's exposure and
cost are still reported. Here: 8 same-budget jobs (4 repair cases × direct, reflect; simulated
policy, every candidate validated for real). Before job 4 the shared environment's fingerprint
changes (**scripted** incident): the rule pauses batch 1, voids it whole and batch 2 runs all 8
jobs again. Only batch 2 concludes; the total cost counts both."""

MECHANISM = """**Mechanism analysis beside, never instead of, the end-to-end result.** The "mechanism
activated" subset (the start failed a visible test, so the arm's reflection, critique or
self-tests actually ran) answers a conditional question: how often the mechanism finished the
job *when it acted*. The deployment question is end-to-end, on every eligible job (incomplete
ones included). *Recorded run of the SIMULATED default sweep* (`data/arms/simulated_default`,
8 cases × 4 seeds per arm)."""


def batches_html(rec: Mapping[str, Any] | None = None) -> str:
    rec = rec if rec is not None else recorded()
    rows = [
        {
            "batch": b["batch"],
            "environment": b["environment"],
            "status": b["status"],
            "jobs run (of planned)": f"{b['ran']} of {b['planned']}",
            "cases exposed": b["cases_exposed"],
            "validations": b["validations"],
            "cost (units)": b["cost_units"],
            "solved (direct, reflect)": ", ".join(f"{b['success'][a]:.0%}" for a in ("direct", "reflect"))
            if b["success"]
            else "voided: no conclusion",
        }
        for b in rec["batches"]
    ]
    return frame_html(pl.DataFrame(rows))


def mechanism_html(rec: Mapping[str, Any] | None = None) -> str:
    rec = rec if rec is not None else recorded()
    rows = [
        {
            "arm": arm_name(m["arm"]),
            "end-to-end: solved of every eligible job": f"{m['solved']} of {m['eligible']} ({m['solved'] / m['eligible']:.0%})",
            "mechanism activated: solved": f"{m['activated_solved']} of {m['activated']}"
            + (f" ({m['activated_solved'] / m['activated']:.0%})" if m["activated"] else ""),
            "not activated: solved": f"{m['not_activated_solved']} of {m['eligible'] - m['activated']}",
        }
        for m in rec["mechanism"]
    ]
    return frame_html(pl.DataFrame(rows))


def summary_md(rec: Mapping[str, Any] | None = None) -> str:
    rec = rec if rec is not None else recorded()
    void = [b for b in rec["batches"] if b["status"] == "voided"]
    total = sum(b["cost_units"] for b in rec["batches"])
    spent = sum(b["cost_units"] for b in void)
    return (
        f"{len(void)} voided batch: {sum(b['ran'] for b in void)} jobs run, {spent:g} cost units, "
        f"{sum(b['cases_exposed'] for b in void)} cases' hidden tests already scored — all reported; "
        f"total spent {total:g} units for one conclusion. Rule digest `{rec['rule_digest']}`, "
        f"registered before batch 1. Regenerate: `{rec['command']}`."
    )

"""The "stopping behaviour and planning, measured" section of diminishing_returns (seed 002 §7).

Both twins call these; they read the committed recording (`labkit.experiments.arms.stops`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from labkit.experiments.arms.stops import STOP_RULES, TIMINGS, recorded
from labkit.views.tables import frame_html

__all__ = [
    "INTRO",
    "PLANNING",
    "WRONG_TOOL",
    "audit_html",
    "planning_html",
    "wrong_tool_html",
    "wrong_tool_md",
]

INTRO = """## Stopping behaviour and planning, measured

Seed 002 §7: stopping is itself a behaviour to measure. For every job of the recorded
same-budget sweep (*recorded run of the SIMULATED default setting*, `data/arms/simulated_default`:
8 repair cases × 4 seeds per arm, every candidate validated for real) the engine's stop rule,
and the stop's timing against the hidden outcome recorded each round: **on time** (at the first
round the hidden tests passed), **late** (kept working after they passed; *broke* if it then
ended wrong), **early** (declared "resolved" on the visible tests while the hidden tests fail),
**cut off** (a round cap or the budget ended it while the hidden tests fail: whether more
rounds would help is unknown)."""

PLANNING = """**A planning step on and off — SIMULATED, and true only for the configuration measured.**
A toy task of 4 sub-steps in 9 actions (`labkit.experiments.arms.planning`, parameters in the
table): without a plan the agent re-verifies everything done so far after each action and
sometimes redoes a finished step; the plan costs one action and keeps a checklist. The table
says *where* the plan helped in each configuration — completion, or only fewer repeated
verifications. It is not evidence that planning helps a real model."""

WRONG_TOOL = """**When open search is the wrong tool.** A task with a known, fixed procedure gains nothing
from search; a high-loss task with a weak verifier should not ship on that verifier's pass."""


def audit_html(rec: Mapping[str, Any] | None = None) -> str:
    rec = rec if rec is not None else recorded()
    cols = ["arm", "jobs", *(f"rule {k}" for k in STOP_RULES), *TIMINGS]
    return frame_html(pl.DataFrame(rec["audit"]).select(cols))


def planning_html(rec: Mapping[str, Any] | None = None) -> str:
    rec = rec if rec is not None else recorded()
    rows = [
        {
            "configuration (simulated)": r["config"]["name"],
            "completed, no plan": f"{r['off']['completed']} of {r['off']['tasks']}",
            "completed, plan": f"{r['on']['completed']} of {r['on']['tasks']}",
            "repeated verifications per task, no plan": round(r["off"]["repeated"], 1),
            "repeated verifications per task, plan": round(r["on"]["repeated"], 1),
            "where the plan helped (this configuration only)": r["helped"],
        }
        for r in rec["planning"]
    ]
    return frame_html(pl.DataFrame(rows), 1)


def wrong_tool_html(rec: Mapping[str, Any] | None = None) -> str:
    rec = rec if rec is not None else recorded()
    rows = [
        {
            "run (published, re-graded)": v["run"],
            "tasks": v["tasks"],
            "own tests accept": v["accepted"],
            "accepted but wrong": v["accepted_wrong"],
            "rejected but right": v["rejected_right"],
            **{f"loss per task if shipped, wrong = {k} reviews": round(x, 2) for k, x in v["loss"].items()},
            "escalate every task": 1,
        }
        for v in rec["verifier"]
    ]
    return frame_html(pl.DataFrame(rows))


def wrong_tool_md(rec: Mapping[str, Any] | None = None) -> str:
    rec = rec if rec is not None else recorded()
    f = rec["fixed"]
    v = rec["verifier"][0]
    prices = ", ".join(f"{k} {x:g}" for k, x in f["prices"].items())
    return (
        f"*Fixed procedure* (recorded real run on `data/api_change`; declared prices: {prices}): the open "
        f"search spent **{f['search_spent']:g}** cost units over {f['search_branches']} routes to reach "
        f"{f['search_status']}; applying the known migration directly (execute, verify, confirm) spent "
        f"**{f['procedure_spent']:g}** for {f['procedure_status']}. "
        f"*Weak verifier* (published run re-graded; losses are stated parameters, in units of one review): "
        f"GPT-4's own tests accepted {v['accepted']} single-shot solutions, {v['accepted_wrong']} of them wrong, "
        f"and rejected {v['rejected_right']} right ones; shipping on their pass costs more than escalating every "
        f"task once a wrong answer costs more than **{v['break_even']:.1f}** reviews. Regenerate: `{rec['command']}`."
    )

"""The long-projects page (worked example D, seed 002 §6), shared by notebooks/long_projects.py
(marimo) and its JupyterLab twin: text, stepper pages, charts and tables, all read from the
committed recording (data/long_projects/shop_study.json); nothing runs on open."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

import altair as alt
import polars as pl

from labkit.core.paths import data_root, read_recording
from labkit.experiments.long_projects import study
from labkit.views.stepper import Stepper
from labkit.views.tables import frame_html

__all__ = [
    "COMPARE", "INTRO", "LABEL", "LABEL_HTML", "PROGRESS", "SAME_SOURCE", "STEPPER", "compare_chart", "compare_html",
    "load", "progress_chart", "progress_html", "qa_html", "showcase", "stepper", "stepper_pages",
]  # fmt: skip

LABEL = "*simulated* roles (planner, developer, QA: stated parameters); real code, real validations"
LABEL_HTML = "<i>simulated</i> roles (planner, developer, QA: stated parameters); real code, real validations"

INTRO = f"""
# Long projects: carried by artifacts and evidence

A small shop's invoicing (`data/long_projects/shop`): seven requirements, each with dev tests,
QA checks written from the requirements, and a **hidden acceptance benchmark** no role ever sees.
Each iteration the **planner** turns the project's state and execution evidence into work items,
the **developer** changes the code, the engine validates and keeps or rolls the change back, the
held candidate is **frozen by digest**, **QA** checks that snapshot and files findings as new or
reopened items, and the hidden benchmark scores it for *you*, the reader — never for a role.
Requirements interact: fixing the invoice total (R7) also "tidies" the discount's rounding,
which reopens R3 once QA checks it.

Figures: {LABEL}. Every number comes from the recording made by
`{study.COMMAND}`.
"""

STEPPER = """
## One project, iteration by iteration

Plan, patch, the frozen snapshot's QA verdict, the items, and the sealed hidden score (shown to
you only; nothing from it flows back into planning).
"""

PROGRESS = """
## Progress: added, closed, reopened, open

Long projects keep unresolved and reopened issues; progress is four counts, not one.
"""

COMPARE = """
## Matched iterations are not matched cost

Two run policies on the same project and seeds (independent QA): one work item per iteration, or
three. At the same number of iterations the batch is ahead; at the same calls, tokens or cost
units the ranking can change. Hidden score = mean fraction of the hidden benchmark passed.
"""

SAME_SOURCE = """
## Same-source vs independent QA

QA (a) is the developer's own model: it tends not to write the checks its blind spot hides
(boundaries, rounding), with the stated **correlation**. QA (b) is independent: checks written
from the requirements. The correlation is swept (0, 0.5, 0.9); at 0 the same-source QA draws the
same luck as the independent one. Against the hidden benchmark, the bugs each lets through
(one item per iteration, six seeds; "missed" = failing on the hidden benchmark at the end, and
not among QA's findings at its last review):
"""


def load() -> dict[str, Any]:
    return read_recording(data_root() / study.RECORDING, study.COMMAND)


def showcase(rec: Mapping[str, Any]) -> dict[str, Any]:
    """The run the stepper shows: the first (one item, independent QA) run with a reopened item."""
    runs = study.runs_of(rec, study.POLICIES[0].name, study.qa_label(study.QA_SOURCES[0]))
    return next((r for r in runs if any(it["reopened"] for it in r["iterations"])), runs[0])


def _items_html(items: list[Mapping[str, Any]]) -> str:
    if not items:
        return "<p>no items yet</p>"
    frame = pl.DataFrame(
        [
            {
                "item": i["id"],
                "requirement": i["title"],
                "status": "open" if i["open"] else "closed",
                "opened by": i["origin"],
                "times reopened": i["reopened"],
            }
            for i in items
        ]
    )
    return frame_html(frame)


def stepper_pages(run: Mapping[str, Any]) -> list[str]:
    e = html.escape
    pages = []
    for it, h in zip(run["iterations"], run["hidden"][1:], strict=True):
        variants = ", ".join(f"{r}: <b>{v}</b>" for r, v in it["variants"]) or "none"
        qa = (
            "QA did not run this iteration"
            if not it["qa_ran"]
            else "QA passed every check it wrote"
            if not it["qa_failing"]
            else "QA failing: " + ", ".join(e(n.split("::")[-1]) for n in it["qa_failing"])
        )
        pages.append(
            f"<h4>Iteration {it['index']} <small>({LABEL_HTML})</small></h4>"
            f"<p><b>Plan:</b> {', '.join(it['plan']) or 'nothing open'} · <b>developer wrote:</b> {variants}</p>"
            f"<p><b>Decision:</b> {e(it['decision'])} — {e(it['reason'])}</p>"
            f"<details><summary>patch</summary><pre style='font-size:12px'>{e(it['diff']) or '(none)'}</pre></details>"
            f"<p><b>Frozen snapshot</b> <code>{it['snapshot'][:12]}</code> · {qa}</p>"
            f"<p>added {it['added']} · closed {it['closed']} · reopened {it['reopened']} · open {it['open']}</p>"
            + _items_html(it["items"])
            + f"<p style='border:1px dashed #999;padding:4px'>🔒 <b>Sealed hidden score (reader only):</b> "
            f"{h['passed']}/{h['total']} passed; failing: {', '.join(h['failing_requirements']) or 'none'}</p>"
        )
    return pages


def stepper(run: Mapping[str, Any]) -> tuple[str, Stepper]:
    pages = stepper_pages(run)
    caption = f"Policy *{run['policy']}*, QA *{run['qa']}*, seed {run['seed']} ({len(pages)} iterations). {LABEL}."
    return caption, Stepper(
        len(pages), [f"iteration {i + 1}" for i in range(len(pages))], unit="iteration", pages=pages
    )


def progress_html(run: Mapping[str, Any]) -> str:
    return frame_html(pl.DataFrame(study.progress(run)), digits=1)  # cost units to a tenth


def progress_chart(run: Mapping[str, Any]) -> alt.Chart:
    rows = [
        {"iteration": r["iteration"], "count": r[k], "items": k}
        for r in study.progress(run)
        for k in ("added", "closed", "reopened", "open")
    ]
    return (
        alt.Chart(pl.DataFrame(rows))
        .mark_line(point=True)
        .encode(x=alt.X("iteration:O"), y=alt.Y("count:Q", title="items"), color=alt.Color("items:N"))
        .properties(width=420, height=220, title=f"Items per iteration ({run['policy']}; simulated roles)")
    )


ITERATIONS = study.COMPARE_ITERATIONS
COST_UNITS = study.COMPARE_COST_UNITS


def _points_frame(points: list[study.Point], unit: str) -> pl.DataFrame:
    return pl.DataFrame(
        [
            {
                unit: p.amount,
                **{pol.name: s for pol, s in zip(study.POLICIES, p.scores, strict=True)},
                "ahead": p.leader,
            }
            for p in points
        ]
    )


def compare_html(rec: Mapping[str, Any]) -> str:
    by_it = _points_frame(study.at_iterations(rec, ITERATIONS), "iterations")
    by_cost = _points_frame(study.at_cost(rec, "cost_units", COST_UNITS), "cost units")
    by_calls = _points_frame(study.at_cost(rec, "calls", study.COMPARE_CALLS), "model calls")
    by_tokens = _points_frame(study.at_cost(rec, "tokens", study.COMPARE_TOKENS), "tokens")
    flip = study.flips(rec, ITERATIONS, "cost_units", COST_UNITS)
    note = (
        "<p>No ranking change in this recording.</p>"
        if not flip
        else f"<p><b>The ranking changes:</b> at {flip[0][0].amount:g} iterations <i>{flip[0][0].leader}</i> is ahead; "
        f"at {flip[0][1].amount:g} cost units <i>{flip[0][1].leader}</i> is.</p>"
    )
    return (
        f"<p><b>At matched iterations</b> (mean hidden score over {len(rec['seeds'])} seeds)</p>{frame_html(by_it)}"
        f"<p><b>At matched cost</b> (cost units = tokens/1000 + 1 per validation)</p>{frame_html(by_cost)}"
        f"<p><b>At matched model calls</b> (planner, developer, QA)</p>{frame_html(by_calls)}"
        f"<p><b>At matched tokens</b></p>{frame_html(by_tokens)}{note}"
    )


def compare_chart(rec: Mapping[str, Any]) -> alt.HConcatChart:
    rows = []
    for policy in study.POLICIES:
        for r in study.runs_of(rec, policy.name, study.qa_label(study.QA_SOURCES[0])):
            for it, h in zip(r["iterations"], r["hidden"][1:], strict=True):
                rows.append(
                    {
                        "policy": policy.name,
                        "seed": r["seed"],
                        "iteration": it["index"],
                        "cost units": it["cost_units"],
                        "hidden score": h["passed"] / h["total"],
                    }
                )
    base = alt.Chart(pl.DataFrame(rows)).mark_line(point=True, opacity=0.7)
    enc = {
        "y": alt.Y("mean(hidden score):Q", title="hidden score (mean)"),
        "color": alt.Color("policy:N"),
    }
    left = base.encode(x=alt.X("iteration:O"), **enc).properties(width=300, height=220, title="by iterations")
    right = (
        alt.Chart(pl.DataFrame(rows))
        .mark_point(opacity=0.6)
        .encode(x=alt.X("cost units:Q"), y=alt.Y("hidden score:Q"), color=alt.Color("policy:N"))
        .properties(width=300, height=220, title="by cost units (each run, each iteration)")
    )
    return alt.hconcat(left, right).properties(title="Matched rounds vs matched cost (simulated roles)")


def qa_html(rec: Mapping[str, Any]) -> str:
    return frame_html(pl.DataFrame(study.qa_table(rec))) + f"<p><small>{LABEL_HTML}.</small></p>"

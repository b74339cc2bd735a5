"""HTML pages for stepping through a recorded frontier search (one page per SearchStep).

Each page shows the budget bar (search spent / confirmation spent / held for
confirmation / left), the tree as it stood (every branch with its outcome and spend), the
sealed candidates and the error-class decisions. Pages are built once from
`labkit.loop.search.recorded.steps`; the Stepper shows them without a kernel round trip.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

import altair as alt
import polars as pl

from labkit.loop.search.recorded import SearchStep, Sweep
from labkit.record.events import Kind
from labkit.views.stepper import Stepper

__all__ = [
    "ENDED", "budget_bar", "outcome_words", "routes_frame", "search_browser", "shown_sweep", "spend_md", "step_label", "step_page",
    "sweep_chart", "sweep_frame", "tree_html",
]  # fmt: skip

# why a search (or a unit of work) ended, as a class reads it (the search's reasons, and the
# engine's stop rules a unit's stop names)
ENDED = {
    "budget_exhausted": "stopped when the next step no longer fitted the budget",
    "budget": "stopped when the next step no longer fitted the budget",
    "frontier-empty": "every route was tried",
    "round-cap": "the cap on expansions was reached",
    "policy-denied": "a tool call was refused by policy",
    "quarantine": "quarantined: an integrity alarm or an unresolved side effect",
    "integrity": "quarantined: an integrity alarm or an unresolved side effect",
    "frontier_empty": "every route was tried",
    "max_expansions": "the cap on expansions was reached",
    "stalled": "no route made progress",
    "no_progress": "no round made progress",
    "policy_denied": "a tool call was refused by policy",
    "confirmation_unfunded": "a candidate was sealed, but the reserve could not pay its confirmation",
    "confirmation_failed": "the sealed candidate failed the sealed final checks",
    "integrity_or_effect_unresolved": "quarantined: an integrity alarm or an unresolved side effect",
    "escalated": "escalated to a person",
}

_COLOURS = {
    "search": "#4c78a8", "confirm": "#54a24b", "held": "#f2cf5b", "left": "#e6e6e6",
    "sealed": "#54a24b", "frontier": "#4c78a8", "not expanded": "#e45756",
    "execute failed": "#b279a2", "not run": "#9d9d9d", "quarantined": "#000000",
}  # fmt: skip


def budget_bar(step: SearchStep) -> str:
    """A horizontal bar of the limit: search spent, confirmation spent, held, left for search."""
    if not math.isfinite(step.limit) or step.limit <= 0:
        return f"<p>spent: search {step.search_spent:g}, confirmation {step.confirm_spent:g} (no finite limit)</p>"
    parts = [("search", step.search_spent), ("confirm", step.confirm_spent), ("held", step.held),
             ("left", step.search_left)]  # fmt: skip
    cells = "".join(
        f'<div title="{k} {v:g}" style="width:{100 * v / step.limit:.2f}%;background:{_COLOURS[k]};height:18px"></div>'
        for k, v in parts
        if v > 0
    )
    legend = " · ".join(f"<b>{k}</b> {v:g}" for k, v in parts)
    return (
        f'<div style="display:flex;border:1px solid #999;width:100%">{cells}</div>'
        f"<p style='margin:4px 0'>limit {step.limit:g}: {legend}</p>"
    )


def tree_html(branches: Sequence[dict[str, Any]]) -> str:
    """The search tree as nested lists: start, then each branch under its parent state."""
    kids: dict[str, list[dict[str, Any]]] = {}
    for b in branches:
        kids.setdefault(str(b.get("parent")), []).append(b)
    parents = {str(b.get("parent")) for b in branches}
    states = {str(b.get("state")) for b in branches}
    roots = [p for p in parents if p not in states]

    def node(b: dict[str, Any]) -> str:
        colour = _COLOURS.get(str(b.get("outcome")), "#666")
        prog = b.get("progress") or {}
        df = f", ΔF {prog['delta_f']:+d}" if "delta_f" in prog else ""
        new = ", ".join(f"{x['check'].split('::')[-1]} [{x['severity']}]" for x in prog.get("new", []))
        below = "".join(node(k) for k in kids.get(str(b.get("state")), [])) if b.get("state") else ""
        return (
            f"<li><span style='color:{colour};font-weight:bold'>{html.escape(str(b.get('outcome')))}</span> "
            f"{html.escape(str(b.get('name')))} — spent {b.get('spent', 0):g}{df}"
            f"{'; new: ' + html.escape(new) if new else ''}{'<ul>' + below + '</ul>' if below else ''}</li>"
        )

    body = "".join(f"<li>start<ul>{''.join(node(b) for b in kids[r])}</ul></li>" for r in roots)
    return f"<ul style='margin:0'>{body or '<li>start</li>'}</ul>"


def step_page(step: SearchStep) -> str:
    sealed = ", ".join(html.escape(s) for s in step.sealed) or "none yet"
    decisions = "".join(
        "<li><b>budget exhausted</b>: stop (no error class: nothing failed)</li>"
        if not d.get("error_class") and d.get("where") == "budget"
        else f"<li><b>{html.escape(str(d.get('error_class')))}</b> at {html.escape(str(d.get('where')))}: "
        f"{html.escape(str(d.get('action')))}</li>"
        for d in step.decisions
    )
    title = step.title
    if step.kind == Kind.STOP:  # the outcome in words, not "success; ended on: budget_exhausted"
        title = f"the task ended {outcome_words(str(step.detail.get('status')), str(step.detail.get('reason')))}"
    return (
        f"<h4 style='margin:0 0 6px'>{html.escape(title)}</h4>{budget_bar(step)}"
        f"<p style='margin:6px 0 2px'><b>tree</b></p>{tree_html(step.branches)}"
        f"<p style='margin:6px 0'><b>sealed</b>: {sealed}</p>"
        f"<p style='margin:6px 0 2px'><b>error-class decisions</b></p><ul style='margin:0'>{decisions or '<li>none</li>'}</ul>"
    )


def outcome_words(status: str, reason: str) -> str:
    """How a task ended, in words: "success" means a sealed candidate was confirmed; why the search
    itself stopped is said apart from it (a success whose search ran out of budget is still a success)."""
    why = ENDED.get(reason, reason.replace("_", " "))
    if status == "success" and reason in ("budget_exhausted", "budget"):
        return f"success: a sealed candidate was confirmed ({why})"
    if status == "success":
        return f"success: {why}"
    return f"{status.replace('_', ' ')}: {why}"


def spend_md(run: Sweep) -> str:
    """One run's end in words: outcome, spend, and what is unspent split into spendable and reserved."""
    end = run.steps[-1]
    unspent = (
        f"**{end.left:g}** unspent: {end.search_left:g} spendable on search, {end.held:g} still reserved "
        "for confirmation"
        if end.held
        else f"**{end.left:g}** unspent"
    )
    return (
        f"At **{run.total:g}** units, {run.reserve:g} of them reserved for confirmation, the task ended "
        f"**{outcome_words(run.result.status, run.result.reason)}**. Search spent **{end.search_spent:g}**, "
        f"confirmation **{end.confirm_spent:g}** (total **{end.search_spent + end.confirm_spent:g}**); {unspent}."
    )


def sweep_frame(sweeps: Sequence[Sweep]) -> pl.DataFrame:
    """One row per total budget: how the task ended, the spend, and what is unspent (spendable vs reserved)."""
    last = [s.steps[-1] for s in sweeps]
    return pl.DataFrame(
        {
            "total": [s.total for s in sweeps],
            "status": [s.result.status for s in sweeps],
            "reason": [s.result.reason for s in sweeps],
            "search": [st.search_spent for st in last],
            "confirmation": [st.confirm_spent for st in last],
            "left": [st.left for st in last],
            "spendable": [st.search_left for st in last],
            "reserved": [st.held for st in last],
        }
    )


def shown_sweep(sweeps: Sequence[Sweep]) -> pl.DataFrame:
    """`sweep_frame` as a class reads it: outcome in words, spend in cost units."""
    f = sweep_frame(sweeps)
    return pl.DataFrame(
        {
            "total budget (cost units)": f["total"],
            "outcome": [outcome_words(s, r) for s, r in zip(f["status"], f["reason"], strict=True)],
            "search spent": f["search"],
            "confirmation spent": f["confirmation"],
            "unspent, spendable on search": f["spendable"],
            "unspent, reserved for confirmation": f["reserved"],
        }
    )


def routes_frame(run: Sweep) -> pl.DataFrame:
    """What the records say about each route: its outcome, its spend and why."""
    b = run.result.branches
    return pl.DataFrame(
        {
            "route": [x.name for x in b],
            "outcome": [x.outcome for x in b],
            "spent (cost units)": [float(x.spent) for x in b],
            "why": [x.reason for x in b],
        }
    )


def sweep_chart(sweeps: Sequence[Sweep], chosen: float | None = None) -> alt.Chart:
    """Spend per total budget, coloured by how the task ended; the chosen total outlined."""
    frame = (
        sweep_frame(sweeps)
        .unpivot(
            ["search", "confirmation", "left"],
            index=["total", "status", "reason"],
            variable_name="part",
            value_name="units",
        )
        .with_columns((pl.col("total") == (chosen if chosen is not None else -1)).alias("chosen"))
    )
    return (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            x=alt.X("total:O", title="total budget (cost units)"),
            y=alt.Y("units:Q", title="cost units"),
            color=alt.Color(
                "part:N",
                sort=["search", "confirmation", "left"],
                scale=alt.Scale(
                    domain=["search", "confirmation", "left"],
                    range=[_COLOURS["search"], _COLOURS["confirm"], "#bdbdbd"],
                ),
                legend=alt.Legend(orient="top", title=None),
            ),
            opacity=alt.condition("datum.status == 'success'", alt.value(1.0), alt.value(0.35)),
            stroke=alt.condition("datum.chosen", alt.value("black"), alt.value(None)),
            tooltip=["total:Q", "status:N", "reason:N", "part:N", "units:Q"],
        )
        .properties(width=alt.Step(26), height=180, title="faded = incomplete (no verified, confirmed candidate)")
    )


def step_label(step: SearchStep) -> str:
    """What one step did, short enough for the stepper's label ("C: sealed", not "branch")."""
    d = step.detail
    if step.kind == Kind.DEFINE:
        return "the rule, before any candidate"
    if step.kind == Kind.EXPAND:
        return f"expand {d.get('hypothesis') or 'the start'}"
    if step.kind == Kind.BRANCH:
        return f"{str(d.get('name', '?')).split(' ')[0]}: {d.get('outcome')}"
    if step.kind == Kind.SEAL:
        return f"seal {str(d.get('name', '?')).split(' ')[0]}"
    if step.kind == Kind.ERROR_DECISION:
        return f"{d.get('where')}: {d.get('action')}"
    if step.kind == Kind.CONFIRM:
        ok = d.get("confirmed")
        return "confirmation not funded" if ok is None else f"confirm: {'pass' if ok else 'fail'}"
    if step.kind == Kind.STOP:
        return f"end: {d.get('status')}"
    return str(step.kind)


def search_browser(run: Sweep) -> Stepper:
    """A Stepper over one recorded search (marimo: wrap in mo.ui.anywidget; JupyterLab: display)."""
    return Stepper(
        len(run.steps), [step_label(s) for s in run.steps], unit="step", pages=[step_page(s) for s in run.steps]
    )

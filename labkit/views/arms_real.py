"""The recorded REAL runs on the "is reflection worth it?" page: one caption, one table, the commands.

Three suites were recorded with SmolLM2-135M (`data/arms/*.sqlite`, read offline): HumanEval
from the stub, the repair cases, and the HumanEval *control*, which starts every job from the
canonical (correct) solution. A control job that ends right has solved nothing: it measures
whether an arm breaks a right answer. Every number here is counted from the ledgers
(`labkit.experiments.arms.arm_metrics`), and the commands that recorded them live in a collapsed
block, not in the prose.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

import polars as pl

from labkit.experiments.arms import arm_metrics as metrics
from labkit.record.ledger import Ledger
from labkit.views.arms_page import ARM_ORDER, REAL_MODEL, arm_name, recorded_default

__all__ = ["SUITES", "commands_html", "is_control", "real_intro", "real_md", "real_table"]

# suite -> how the page names it (in this order)
SUITES = {
    "humaneval": "HumanEval, from the stub",
    "repair": "repair cases",
    "humaneval-control": "HumanEval, from the right answer (control)",
}
_SHORT = {"humaneval": "HumanEval", "repair": "repair", "humaneval-control": "control"}
Real = Mapping[str, tuple[Ledger, dict[str, Any]]]


def _jobs(ledger: Ledger) -> pl.DataFrame:
    return metrics.runs(ledger).filter(pl.col("status") != "not available")


def is_control(ledger: Ledger) -> bool:
    """Every job started from a right answer (the correct-original control): read from the ledger."""
    jobs = _jobs(ledger)
    return jobs.height > 0 and bool(jobs["start"].all())


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def real_md(suite: str, ledger: Ledger) -> str:
    """One suite's result in words, counted from its ledger; the control says what it measures."""
    jobs = _jobs(ledger)
    cases, label = jobs["case"].n_unique(), SUITES.get(suite, suite)
    if not is_control(ledger):
        solved = jobs.filter(pl.col("correct"))
        where = (
            f" ({solved['case'].n_unique()} of {cases} problems in some arm)"
            if solved.height
            else f": no arm solved any of the {cases} problems"
        )
        return f"**{label}** ({cases} problems): solved **{solved.height} of {jobs.height}** jobs{where}."
    calls = jobs.group_by("arm").agg(
        pl.col("calls").sum(), pl.len().alias("jobs"), (pl.col("rounds") > 0).sum().alias("rewrote")
    )
    calls = calls.sort(pl.col("arm").map_elements(ARM_ORDER.index, return_dtype=pl.Int64))
    silent = [arm_name(a) for a, c in zip(calls["arm"], calls["calls"], strict=True) if c == 0]
    asked = calls.filter(pl.col("calls") > 0)
    broken = int((~jobs["correct"]).sum())
    said = (
        f" {_sentence(_listed(silent))} made **0 calls**: the start already passes the visible tests, so the engine stops "
        "before asking the model."
        if silent
        else ""
    )
    if asked.height:
        names = _listed([arm_name(a) for a in asked["arm"]])
        kept = int(asked["jobs"].sum()) - int(asked["rewrote"].sum())
        said += (
            f" {_sentence(names)} called {REAL_MODEL} ({int(asked['calls'].sum())} calls in all) and no rewrite replaced the "
            f"start in {kept} of {int(asked['jobs'].sum())} of their jobs; a critic that accepts everything is no "
            "evidence that self-critique is safe."
        )
    return (
        f"**{label}** ({cases} problems): every job **starts from the canonical solution**, so this suite measures "
        f"whether an arm **breaks a right answer**, not whether it solves one; {REAL_MODEL} solved nothing here. "
        f"**{broken} of {jobs.height}** jobs ended wrong.{said}"
    )


def real_intro(real: Real) -> str:
    """The section's heading and one line per suite, in `SUITES` order."""
    suites = [s for s in SUITES if s in real] + [s for s in real if s not in SUITES]
    lines = [f"- {real_md(s, real[s][0])}" for s in suites]
    unsolved = all(not _jobs(real[s][0])["correct"].any() for s in suites if not is_control(real[s][0]))
    limit = next((m["limit"] for _, m in real.values() if "limit" in m), None)
    budget = f" under one budget per job ({limit['calls']} calls, {limit['tokens']} tokens)" if limit else ""
    stronger = (
        " The stronger arm had no second model: **not available**, never stood in for."
        if any(m.get("stronger") == "not available" for _, m in real.values())
        else ""
    )
    moral = (
        " A 135M model cannot answer the question; the table shows the machinery (same budget, spend beside "
        "the limit, jobs out of budget counted), not a difference between arms."
        if unsolved
        else ""
    )
    return (
        f"## REAL runs: {REAL_MODEL}, recorded\n\nEvery arm on three suites{budget}:\n\n"
        + "\n".join(lines)
        + f"\n\n{moral.strip()}{stronger}"
    )


def _per_job(jobs: pl.DataFrame, arm: str, column: str) -> str:
    x = float(jobs.filter(pl.col("arm") == arm)[column].mean() or 0.0)  # type: ignore[arg-type]
    return f"{x:.0f}" if x.is_integer() or x >= 100 else f"{x:.1f}"


def real_table(real: Real) -> pl.DataFrame:
    """One row per arm across the suites: what it solved (or, on the control, kept right), then
    model calls and tokens per job and jobs out of budget, suite by suite (HumanEval / repair / control)."""
    suites = [s for s in SUITES if s in real]
    frames = {s: metrics.runs(real[s][0]) for s in suites}
    short = " / ".join(_SHORT[s] for s in suites)
    limit = next((m["limit"] for _, m in real.values() if "limit" in m), {"calls": "?", "tokens": "?"})
    rows: list[dict[str, str]] = []
    for arm in (a for a in ARM_ORDER if any(a in set(f["arm"]) for f in frames.values())):
        row: dict[str, str] = {"arm": arm_name(arm)}
        ran = {s: _jobs(real[s][0]) for s in suites}
        if not any(ran[s].filter(pl.col("arm") == arm).height for s in suites):  # said once, not in every cell
            rows.append(
                {
                    **row,
                    **dict.fromkeys(rows[0] if rows else [], "—"),
                    "arm": f"{arm_name(arm)}: not available",
                }
            )
            continue
        for s in suites:
            jobs = _jobs(real[s][0]).filter(pl.col("arm") == arm)
            head = f"{_SHORT[s]}: {'still right (started right)' if is_control(real[s][0]) else 'solved'}"
            row[head] = f"{int(jobs['correct'].sum())} of {jobs.height}" if jobs.height else "not available"
        available = all(ran[s].filter(pl.col("arm") == arm).height for s in suites)
        row[f"calls per job, mean ({short}; limit {limit['calls']})"] = (
            " / ".join(_per_job(ran[s], arm, "calls") for s in suites) if available else "not available"
        )
        row[f"tokens per job, mean ({short}; limit {limit['tokens']})"] = (
            " / ".join(_per_job(ran[s], arm, "tokens") for s in suites) if available else "not available"
        )
        row[f"jobs out of budget ({short})"] = (
            " / ".join(
                str(ran[s].filter((pl.col("arm") == arm) & (pl.col("status") == "incomplete")).height) for s in suites
            )
            if available
            else "not available"
        )
        rows.append(row)
    return pl.DataFrame(rows)


def commands_html(real: Real) -> str:
    """A collapsed block: for each recorded run on the page (the real suites and the SIMULATED
    default setting), the command that recorded it and how long it took."""
    runs = {f"{REAL_MODEL}, {SUITES.get(suite, suite)}": meta for suite, (_, meta) in real.items()}
    recorded = recorded_default()
    if recorded is not None:
        runs["SIMULATED, the sliders' default setting"] = recorded[1]
    took = {label: f" ({meta['seconds']:.0f} s)" if "seconds" in meta else "" for label, meta in runs.items()}
    items = "".join(
        f"<li>{html.escape(label)}{took[label]}:"
        f"<pre style='white-space:pre-wrap;overflow-wrap:anywhere;margin:0.2em 0 0.6em'>{html.escape(meta['command'])}</pre></li>"
        for label, meta in runs.items()
        if "command" in meta
    )
    return (
        "<details class='labkit-commands'><summary>How these runs were recorded (the commands; "
        "see data/arms/README.md)</summary><ul>" + items + "</ul></details>"
    )

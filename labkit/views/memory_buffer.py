"""The memory notebook's Reflexion-on-HumanEval section, built once for both notebooks: the
buffer's lift by trial with its controls, the truncation effect, and the recorded real
SmolLM2 run.

Every number is read from a recording in data/memory/ (the SIMULATED measurements take
minutes: `labkit.experiments.memory.recording` made them, with the command stored beside the
numbers), so the page opens without running anything. Charts are altair (marimo shows them
live, the JupyterLab twin as offline SVG via `views.jupyter.static_chart`); tables are
`views.tables.frame_html`.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from labkit.core.paths import DATA, read_recording
from labkit.views.tables import frame_html

if TYPE_CHECKING:
    import altair as alt

__all__ = [
    "BUFFER", "RECORDING", "SIMULATED", "SMOLLM2", "TRUNCATION", "buffer_chart", "buffer_html", "load", "smollm2",
    "smollm2_html", "truncation_chart", "truncation_html",
]  # fmt: skip

RECORDING = DATA / "memory" / "simulated_reflexion.json"
SMOLLM2 = DATA / "memory" / "smollm2_reflexion_humaneval.json"
SIMULATED = "SIMULATED"

BUFFER = """## 5. Reflexion's buffer on HumanEval, and when its budget binds (SIMULATED actor)

**SIMULATED actor** on **real HumanEval problems**: each problem offers its canonical solution,
a lookup table of the docstring examples (passes the visible examples, fails the hidden
`check`), `return None`, and real mutants of the canonical solution that the visible examples
reject. Every pick is validated for real; the problem's hidden `check` scores. The buffer arm
reads its reflections (error class, first failing example, what is not yet ruled out) before
each trial; the controls keep everything but the information: a **sparse reward** (pass/fail
only, no message to reflect on) and an **actor that ignores the buffer**. Recorded once (the
command is under each figure); the page reads the recording."""

TRUNCATION = """**When the budget binds.** With up to eight plausible wrong answers per problem, each
reflection runs to tens of tokens, so a tight budget shows only one or two. Keeping the newest
or the oldest loses success against a generous budget; folding the dropped reflections into a
one-line summary of what was ruled out recovers it (SIMULATED actor; same problems, seeds and
trials in every arm)."""


@functools.cache
def _read(path: Path, command: str) -> dict[str, Any]:
    return read_recording(path, command, "data/memory/README.md")


def load() -> dict[str, Any]:
    """The recorded SIMULATED measurements (read once per process)."""
    return _read(RECORDING, f"python -m labkit.experiments.memory.recording --out {RECORDING}")


def smollm2() -> dict[str, Any]:
    """The recorded real SmolLM2-135M run."""
    return _read(
        SMOLLM2,
        "python -m labkit.experiments.memory.on_humaneval --model labkit/smollm2 --sample 6 "
        f"--sample-seed 15 --trials 3 --out {SMOLLM2}",
    )


def _success(section: dict[str, Any]) -> pl.DataFrame:
    return pl.DataFrame(section["success"], schema=["arm", "trial", "success", "low", "high"], orient="row")


def _ci(low: float, high: float) -> str:
    return f"[{low:.3f}, {high:.3f}]"


def buffer_chart(rec: dict[str, Any]) -> alt.LayerChart:
    """Success by trial per arm with its 95% bootstrap interval (the intervals are the recorded ones)."""
    import altair as alt

    data = _success(rec["humaneval"])
    order = [a["name"] for a in rec["humaneval"]["arms"]]
    colour = alt.Color("arm:N", sort=order, legend=alt.Legend(orient="bottom", columns=2, title=None, labelLimit=260))
    x = alt.X("trial:O", title="trial", axis=alt.Axis(labelAngle=0))
    band = (
        alt.Chart(data)
        .mark_errorbar(thickness=1.5, ticks=True)
        .encode(
            x=x,
            xOffset=alt.XOffset("arm:N", sort=order),
            y=alt.Y("low:Q", title="hidden success (95% CI)", scale=alt.Scale(domain=[0, 1])),
            y2="high:Q",
            color=colour,
        )
    )
    dots = (
        alt.Chart(data)
        .mark_point(filled=True, size=45)
        .encode(
            x=x,
            xOffset=alt.XOffset("arm:N", sort=order),
            y="success:Q",
            color=colour,
            tooltip=[
                "arm:N",
                "trial:O",
                alt.Tooltip("success:Q", format=".3f"),
                alt.Tooltip("low:Q", format=".3f"),
                alt.Tooltip("high:Q", format=".3f"),
            ],
        )
    )
    return (band + dots).properties(
        title=f"{SIMULATED} actor, real HumanEval: success by trial", width=alt.Step(22), height=220
    )


def _differences(section: dict[str, Any], trials: list[int] | None = None) -> pl.DataFrame:
    rows = [
        {"arm": a, "minus": b, "trial": t, "difference": e, "95% CI": _ci(lo, hi)}
        for a, b, t, e, lo, hi in section["differences"]
        if trials is None or t in trials
    ]
    return pl.DataFrame(rows)


def buffer_html(rec: dict[str, Any]) -> str:
    """Each arm minus no memory by trial (paired over seed × problem), with the caption and command."""
    h = rec["humaneval"]
    s = h["setting"]
    cells = _differences(h).with_columns(
        (pl.col("difference").map_elements(lambda d: f"{d:+.3f}", return_dtype=pl.Utf8) + " " + pl.col("95% CI")).alias(
            "cell"
        )
    )
    diff = cells.pivot(on="trial", index="arm", values="cell")
    diff = diff.select("arm", *[pl.col(str(t)).alias(f"trial {t}") for t in range(1, s["trials"] + 1)])
    return "".join(
        [
            f"<p><b>{SIMULATED}: success minus no memory</b>, paired over {len(s['seeds'])} seeds × "
            f"{len(h['cases'])} problems: difference [95% bootstrap interval]</p>",
            frame_html(diff),
            f"<p style='font-size:90%'>{SIMULATED} actor (p_fix = {s['p_fix']}), real validation, hidden scoring. Problems: "
            f"a seeded draw (seed {s['sample_seed']}) of {s['sample']} with a readable docstring example, "
            f"up to {s['mutants']} visible-failing mutants each: {', '.join(h['cases'])}. Trial 1 has nothing to "
            f"remember, so every arm ties there by construction. Recorded by <code>{rec['command']}</code> "
            f"({rec['seconds']:.0f} s).</p>",
        ]
    )


def _budgets(rec: dict[str, Any]) -> pl.DataFrame:
    t = rec["truncation"]
    last = t["setting"]["trials"]
    arms = {a["name"]: a for a in t["arms"]}
    rows = []
    for arm, trial, e, lo, hi in t["success"]:
        if trial != last:
            continue
        a = arms[arm]
        how = (
            "no memory" if not a["memory"] else f"keep {a['truncate']}" if a["truncate"] != "summarise" else "summarise"
        )
        rows.append(
            {
                "arm": arm,
                "how": how,
                "budget": a["budget"] if a["memory"] else None,
                "success": e,
                "low": lo,
                "high": hi,
            }
        )
    return pl.DataFrame(rows)


def truncation_chart(rec: dict[str, Any]) -> alt.LayerChart:
    """Success at the last trial vs the buffer's token budget (log axis); no memory as a rule."""
    import altair as alt

    data = _budgets(rec)
    # the arms at one budget side by side (a log axis: a fixed factor is a fixed gap); the tooltip keeps the budget
    nudge = {"keep oldest": 0.9, "keep newest": 1.0, "summarise": 1.11}
    mem = data.filter(pl.col("budget").is_not_null()).with_columns(
        (pl.col("budget") * pl.col("how").replace_strict(nudge, return_dtype=pl.Float64)).alias("at")
    )
    none = data.filter(pl.col("budget").is_null())
    last = rec["truncation"]["setting"]["trials"]
    ticks = sorted({int(b) for b in mem["budget"]})
    x = alt.X(
        "at:Q",
        title="buffer budget (tokens, log scale)",
        axis=alt.Axis(values=ticks, format="d"),
        scale=alt.Scale(type="log", domain=[110, 6000], nice=False),
    )
    ytitle = ["hidden success after", f"trial {last} (95% CI)"]  # two lines: one is taller than the chart
    y = alt.Y("success:Q", title=ytitle, scale=alt.Scale(domain=[0, 1]))
    colour = alt.Color("how:N", sort=list(nudge), legend=alt.Legend(orient="bottom", title=None))
    newest = alt.Chart(mem.filter(pl.col("how") == "keep newest")).mark_line(opacity=0.5).encode(x=x, y=y, color=colour)
    bars = (
        alt.Chart(mem).mark_errorbar(ticks=True).encode(x=x, y=alt.Y("low:Q", title=ytitle), y2="high:Q", color=colour)
    )
    dots = (
        alt.Chart(mem)
        .mark_point(filled=True, size=50)
        .encode(
            x=x,
            y=y,
            color=colour,
            shape=alt.Shape("how:N", legend=None),
            tooltip=["arm:N", "budget:Q", alt.Tooltip("success:Q", format=".3f")],
        )
    )
    rule = alt.Chart(none).mark_rule(strokeDash=[4, 3], color="grey").encode(y="success:Q")
    label = (
        alt.Chart(none)
        .mark_text(align="right", dx=-2, dy=10, color="grey")
        .encode(y="success:Q", x=alt.datum(6000), text=alt.value("no memory"))
    )
    return (rule + label + newest + bars + dots).properties(
        title=f"{SIMULATED} actor, real HumanEval: success vs buffer budget", width=360, height=220
    )


def truncation_html(rec: dict[str, Any]) -> str:
    """The last trial's success per arm and its paired difference from the generous budget."""
    t = rec["truncation"]
    s, last = t["setting"], t["setting"]["trials"]
    data = _budgets(rec)
    generous = {a: (e, lo, hi) for a, _, tr, e, lo, hi in t["differences"] if tr == last}
    table = data.select(
        "arm",
        pl.col("budget").cast(pl.Utf8).fill_null("—"),
        "success",
        pl.struct("low", "high").map_elements(lambda r: _ci(r["low"], r["high"]), return_dtype=pl.Utf8).alias("95% CI"),
        pl.col("arm")
        .map_elements(
            lambda a: f"{generous[a][0]:+.3f} {_ci(*generous[a][1:])}" if a in generous else "—", return_dtype=pl.Utf8
        )
        .alias("minus generous (95% CI)"),
    )
    tok = t["reflection_tokens"]
    return "".join(
        [
            f"<p><b>{SIMULATED}: success after trial {last}</b> ({len(s['seeds'])} seeds × {len(t['cases'])} problems: "
            f"{', '.join(t['cases'])})</p>",
            frame_html(table),
            f"<p style='font-size:90%'>{SIMULATED} actor (p_fix = {s['p_fix']}: the fix no likelier than one wrong "
            f"answer), real mutants and validation, hidden scoring. A reflection is {tok[0]:.0f} tokens on average "
            f"(95% CI {tok[1]:.0f}–{tok[2]:.0f}), so {s['tight']} tokens hold about one. In the chart the three {s['tight']}-token arms are drawn "
            f"side by side at {s['tight']}. Recorded by "
            f"<code>{rec['command']}</code>.</p>",
        ]
    )


def smollm2_html(run: dict[str, Any]) -> str:
    """The recorded real SmolLM2 run: hidden successes by trial per arm, the command, and what it can't show."""
    frame = pl.DataFrame(run["rows"])
    n = frame["case"].n_unique()
    table = (
        frame.group_by("arm", "trial")
        .agg(pl.col("correct").sum().alias("solved"))
        .with_columns((pl.col("solved").cast(pl.Utf8) + f" / {n}").alias("solved (hidden)"))
        .pivot(on="trial", index="arm", values="solved (hidden)")
        .sort("arm", descending=True)
    )
    table = table.select("arm", *sorted((c for c in table.columns if c != "arm"), key=int))
    table = table.rename({c: f"trial {c}" for c in table.columns if c != "arm"})
    return "".join(
        [
            f"<p><b>REAL model, recorded: {run['model']} (SmolLM2-135M, in-process llama.cpp, temperature 0)</b> "
            f"on {n} drawn HumanEval problems ({', '.join(run['cases'])}), {run['trials']} trials per arm</p>",
            frame_html(table),
            f"<p style='font-size:90%'>0 successes in both arms at every trial: with nothing solved there is no "
            f"difference to measure, so this run shows the plumbing on a real model (reflections from real visible "
            f"verdicts reach the prompt, hidden tests never do), not whether the buffer helps. With the buffer "
            f"prepended the 135M model mostly stopped writing a code block; 8 of 36 calls timed out on a loaded "
            f"machine, unevenly between the arms (data/memory/README.md). Command ({run['seconds']:.0f} s): "
            f"<code>{run['command']}</code></p>",
        ]
    )

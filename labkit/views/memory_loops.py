"""The memory notebook's sections 6 to 8, built once for both notebooks: Reflexion's entrenched
false belief and the revision rule that recovers from it; seed 001's unified loop, an external
oracle against self-critique; a sub-task forked into a fresh context against the polluted one
(read from data/memory/fork.json, `labkit.experiments.memory.fork`).

Sections 6 and 7 read one recording (`labkit.experiments.memory.loops`, data/memory/loops.json: SIMULATED
actor and critic, real patches and verdicts, hidden scoring); the intervals are computed here
from its rows with the one bootstrap (`labkit.core.stats.bootstrap_mean`), so nothing runs on open.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from labkit.core.stats import Interval, bootstrap_mean
from labkit.views.tables import frame_html

if TYPE_CHECKING:
    import altair as alt

__all__ = [
    "BELIEF",
    "UNIFIED",
    "belief_html",
    "belief_success",
    "load",
    "unified_html",
    "unified_summary",
]

BELIEF = """## 6. An entrenched false belief, and the revision rule (SIMULATED actor)

A reflection can misattribute a failure: *"the idea was right, the implementation slipped;
retry it."* Here the first reflection on each case says exactly that about the action that just
failed, and the actor follows the newest live recommendation in its buffer. Without a rule,
the belief survives every refutation and the actor retries the same failing patch until the
trials run out. The **revision rule** counts each refutation of a recommendation by the
environment (the retried action failed the visible tests again) and, at two, strikes the
belief and rules its action out. **Simulated actor** (it picks among each case's real
patches); real visible verdicts decide keep or roll back; hidden tests score. Same cases,
seeds and trials in every arm."""

UNIFIED = """## 7. One loop, two critics: an external oracle vs self-critique (SIMULATED actor and critic)

Seed 001's unified reflection loop: generate, criticise, revise, and store a skill only when a
check passed. With an **external oracle** (the visible tests) the loop stops once the tests
pass and the store accepts what the oracle verified. With **self-critique** the actor cannot
read the verdict and a critic scores its own output without access to the truth: it keeps
proposing (every round, every case), and the store refuses to keep anything it "verified".
The **no-progress guard** cuts self-critique's rounds, not its blindness. The engine still keeps
or rolls back every state on the visible tests in all three loops (the blindness is the actor's
and the store's), so compare the final shares together with the proposals it took to reach them.
Simulated actor and critic; real patches, real visible verdicts, hidden scoring."""

_UNIFIED_NOTE = """Skills stored: by the first seed's run, through the store's gate. The external oracle's
library inherits its blind spot: a wrong patch that passes the visible tests is a "verified win" too, and
only the hidden tests show it."""

_FORK_NOTE = """What pollution costs here is tokens: every call re-reads the earlier sub-tasks. The simulated
actor is not distracted by them (their actions have other names), so success moves only where the capacity
cuts the raw transcript, and then within the intervals. A real model's distraction by irrelevant context is
not simulated; section 5's recorded SmolLM2 run shows one real cost of a longer prompt."""


def load() -> dict[str, Any]:
    """The recording (data/memory/loops.json)."""
    from labkit.experiments.memory import loops

    return loops.load()


def _frame(section: dict[str, Any], columns: list[str]) -> pl.DataFrame:
    return pl.DataFrame(section["rows"], schema=columns, orient="row")


def _share(values: pl.Series) -> Interval:
    return bootstrap_mean(values.cast(pl.Float64).to_numpy())


def _paired(frame: pl.DataFrame, a: str, b: str, step: str, at: int) -> Interval:
    """Arm a minus arm b at `step` == `at`, paired over (seed, case) units in a fixed order."""
    rows = frame.filter(pl.col(step) == at)
    pa = rows.filter(pl.col("arm") == a).select("seed", "case", pl.col("correct").alias("a"))
    pb = rows.filter(pl.col("arm") == b).select("seed", "case", pl.col("correct").alias("b"))
    both = pa.join(pb, on=["seed", "case"]).sort("seed", "case")
    return bootstrap_mean((both["a"] - both["b"]).cast(pl.Float64).to_numpy())


def _ci(i: Interval) -> str:
    return f"{i.estimate:.3f} [{i.low:.3f}, {i.high:.3f}]"


def belief_success(rec: dict[str, Any]) -> dict[tuple[str, int], Interval]:
    """(arm, trial) -> share of (seed, case) units hidden-correct after the trial."""
    f = _frame(rec["belief"], ["arm", "seed", "case", "trial", "correct"])
    trials = rec["setting"]["trials"]
    return {
        (a, t): _share(f.filter((pl.col("arm") == a) & (pl.col("trial") == t)).sort("seed", "case")["correct"])
        for a in rec["belief"]["arms"]
        for t in range(1, trials + 1)
    }


def _changes(reads: list[str]) -> list[str]:
    """Per trial, the lines of what the actor read that were not there the trial before."""
    out, before = [], set()
    for text in reads:
        lines = text.splitlines()
        new = [line for line in lines if line not in before]
        out.append("\n".join(new) if new else ("(empty: nothing reflected yet)" if not lines else "(unchanged)"))
        before = set(lines)
    return out


def belief_html(rec: dict[str, Any]) -> str:
    """Success by trial per arm, the two paired differences at the last trial, and one case read
    trial by trial in both false-belief arms."""
    b, s = rec["belief"], rec["setting"]
    trials = s["trials"]
    ok = belief_success(rec)
    table = pl.DataFrame(
        [{"arm": a, **{f"trial {t}": round(ok[a, t].estimate, 3) for t in range(1, trials + 1)}} for a in b["arms"]]
    )
    f = _frame(b, ["arm", "seed", "case", "trial", "correct"])
    buffer, stuck, revised = b["arms"]
    diffs = [
        (f"{stuck} − {buffer}", _paired(f, stuck, buffer, "trial", trials)),
        (f"{revised} − {stuck}", _paired(f, revised, stuck, "trial", trials)),
    ]
    parts = [
        f"<p><b>SIMULATED actor: share hidden-correct after each trial</b> ({len(s['seeds'])} seeds × "
        f"{len(rec['cases'])} cases)</p>", frame_html(table),
        f"<p>Paired over seed × case at trial {trials}: "
        + "; ".join(f"<b>{html.escape(n)}</b> {_ci(i)}" for n, i in diffs) + "</p>",
    ]  # fmt: skip
    ex = b["example"]
    if ex is not None:
        head = (
            f"<p><b>What the actor read, new or changed lines only</b> — case <code>{html.escape(ex['case'])}</code>, "
            f"seed {ex['seed']} (the first seed × case where the rule changed the outcome):</p>"
        )
        rows = []
        reads = [_changes(ex["read"][stuck]), _changes(ex["read"][revised])]
        for t in range(max(len(r) for r in reads)):
            cells = [html.escape(r[t]) if t < len(r) else "(no trial: the visible tests passed)" for r in reads]
            rows.append(
                f"<tr><td>{t + 1}</td>"
                + "".join(f"<td><pre style='white-space:pre-wrap;margin:0'>{c}</pre></td>" for c in cells)
                + "</tr>"
            )
        parts += [
            head,
            f"<table style='border-collapse:collapse;font-size:0.85em'><tr><th>trial</th>"
            f"<th>{html.escape(stuck)}</th><th>{html.escape(revised)}</th></tr>{''.join(rows)}</table>",
        ]
    parts.append(
        f"<p style='font-size:90%'>Recorded by <code>{html.escape(rec['command'])}</code>; the intervals "
        "are computed from its rows as the page opens.</p>"
    )
    return "".join(parts)


def unified_summary(rec: dict[str, Any]) -> pl.DataFrame:
    """Per arm: hidden-correct share at the start and after the last round (95% CI), simulated
    proposals per seed (all cases), and the skills the store accepted in the first seed."""
    u, s = rec["unified"], rec["setting"]
    f = _frame(u, ["arm", "seed", "case", "round", "correct", "proposals"])
    last = s["trials"]
    out = []
    for arm in u["arms"]:
        mine = f.filter(pl.col("arm") == arm)
        per_seed = mine.filter(pl.col("round") == 0).group_by("seed").agg(pl.col("proposals").sum())["proposals"]
        stored = u["stored"][arm]
        out.append(
            {
                "loop": arm,
                "hidden-correct at start": round(_share(mine.filter(pl.col("round") == 0)["correct"]).estimate, 3),
                f"after round {last} (95% CI)": _ci(
                    _share(mine.filter(pl.col("round") == last).sort("seed", "case")["correct"])
                ),
                "proposals per seed": float(np.mean(per_seed.to_numpy())),
                "skills stored": len(stored),
                "of which pass hidden tests": sum(ok for _, ok in stored),
            }
        )
    return pl.DataFrame(out)


def unified_html(rec: dict[str, Any]) -> str:
    """The three loops side by side, with what each stored and the caption."""
    s = rec["setting"]
    head = (
        f"SIMULATED actor and critic, real verdicts</b> ({len(s['seeds'])} seeds × {len(rec['cases'])} cases, "
        f"up to {s['trials']} rounds; a proposal is one simulated call)"
    )
    return _captioned(head, unified_summary(rec), _UNIFIED_NOTE, rec)


def _captioned(head: str, table: pl.DataFrame, note: str, rec: dict[str, Any]) -> str:
    """A bold caption (`head` closes its own <b>), the table, a note and the recording's command."""
    cmd = html.escape(rec["command"])
    return f"<p><b>{head}</p>{frame_html(table)}<p style='font-size:90%'>{note} Recorded by <code>{cmd}</code>.</p>"


FORK = """## 8. Fork a sub-task into a fresh context, or continue in the polluted one (SIMULATED actor)

Seed 001 §06.3: a skill or sub-task can run in a **subagent with a fresh context** that
receives only what it needs and returns a result the parent verifies. Here one session works
through the memory cases one after another. A **fresh fork** per sub-task reads only its
artifacts (module and visible tests) and its own distilled reflections, and returns its final
state; the parent re-checks it on the visible tests and accepts only a verified one. The
**polluted context** continues in the parent's context: the raw transcript of every earlier
trial of every earlier sub-task (each module as proposed, each failing test's message). Both
contexts have the same capacity (the oldest dropped first). **Simulated actor** (same seeds and
trials in both arms), real verdicts, hidden scoring; tokens are estimated at 4 characters each."""


def load_fork() -> dict[str, Any]:
    """The fork recording (data/memory/fork.json)."""
    from labkit.experiments.memory import fork

    return fork.load()


def _fork_frame(rec: dict[str, Any]) -> pl.DataFrame:
    cols = [
        "arm",
        "capacity",
        "seed",
        "position",
        "case",
        "calls",
        "tokens",
        "largest",
        "verified",
        "correct",
    ]
    return pl.DataFrame(rec["rows"], schema=cols, orient="row")


def fork_summary(rec: dict[str, Any]) -> pl.DataFrame:
    """Per capacity and arm: success (95% CI over seed × sub-task), verified results, calls and
    tokens per session, tokens per call, the largest call."""
    f = _fork_frame(rec)
    seeds = len(rec["setting"]["seeds"])
    out = []
    for capacity in rec["setting"]["capacities"]:
        for arm in ("fresh fork", "polluted context"):
            m = f.filter((pl.col("arm") == arm) & (pl.col("capacity") == capacity)).sort("seed", "position")
            calls, toks = int(m["calls"].sum()), int(m["tokens"].sum())
            out.append(
                {
                    "context capacity (tokens)": capacity,
                    "arm": arm,
                    "success (95% CI)": _ci(_share(m["correct"])),
                    "verified results": f"{int(m['verified'].sum())} of {m.height}",
                    "calls per session": round(calls / seeds, 1),
                    "tokens per session": round(toks / seeds),
                    "tokens per call": round(toks / calls),
                    "largest call": max(m["largest"].to_list()),
                }
            )
    return pl.DataFrame(out)


def fork_chart(rec: dict[str, Any]) -> alt.Chart:
    """Mean tokens per call by the sub-task's position in the session, per arm (largest capacity)."""
    import altair as alt

    f = _fork_frame(rec).filter(pl.col("capacity") == max(rec["setting"]["capacities"]))
    data = (
        f.group_by("arm", "position")
        .agg((pl.col("tokens").sum() / pl.col("calls").sum()).alias("tokens per call"))
        .sort("arm", "position")
    )
    return (
        alt.Chart(data)
        .mark_line(point=True)
        .encode(
            x=alt.X("position:O", title="sub-task in the session", axis=alt.Axis(labelAngle=0)),
            y=alt.Y("tokens per call:Q", title="tokens read per call"),
            color=alt.Color("arm:N", legend=alt.Legend(orient="top", title=None)),
            tooltip=["arm:N", "position:O", alt.Tooltip("tokens per call:Q", format=".0f")],
        )
        .properties(
            title="SIMULATED actor: what each call reads as the session goes on",
            width=360,
            height=200,
        )
    )


def fork_html(rec: dict[str, Any]) -> str:
    """The comparison table and what it does and does not show."""
    s = rec["setting"]
    head = (
        f"SIMULATED actor, real verdicts</b>: {len(s['seeds'])} seeds × a session of {len(rec['cases'])} "
        f"sub-tasks, up to {s['trials']} trials each"
    )
    return _captioned(head, fork_summary(rec), _FORK_NOTE, rec)

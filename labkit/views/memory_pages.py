"""The memory notebook's text, runs, tables and stepper, built once for both notebooks (and the
cache notebook's counterexample).

`notebooks/memory.py` (marimo) and `notebooks/memory.ipynb` (JupyterLab) call these functions
and differ only in how they display the result: markdown strings, HTML tables
(`views.tables.frame_html`) and an anywidget `Stepper` over precomputed pages. Numbers come
from `labkit.experiments.memory`; nothing is recomputed when a widget moves.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

import polars as pl

from labkit.views.step_card import diff_html
from labkit.views.stepper import Stepper
from labkit.views.tables import frame_html

if TYPE_CHECKING:
    from labkit.experiments.memory.counterexample import Run
    from labkit.experiments.memory.demo import Demo, Trial
    from labkit.loop.strategies.memory.store import Retrieval

__all__ = [
    "COUNTEREXAMPLE", "INTRO", "REFLEXION", "REPLAY", "SKILLS", "counterexample_md", "counterexample_run",
    "counterexample_section", "reflexion_demo", "reflexion_pages", "reflexion_stepper", "replay_html",
    "retrieval_md", "skills_html",
]  # fmt: skip

INTRO = """# Memory across tasks: what to keep, and when not to use it

A reflection loop can carry what it learned into the next trial (Reflexion's episodic
buffer) and into the next task (conditioned experience, verified skills, replayed
examples). Each kind of memory helps only under a condition, and each has a failure mode.
Every number below comes from a run; **simulated** parts (the actor, the critic, the task
mixes) are labelled, and the patches, validators and caches they act on are real."""

REFLEXION = """## 1. Reflexion: a buffer of verbal reflections, trial by trial

**Simulated actor** (it picks among each case's real patches); real visible tests decide
keep or roll back, hidden tests score. After a trial that still fails the visible tests the wrapper writes a short
reflection — action, error class, artifact, what is not yet ruled out — and prepends the
buffer to the next trial. Recorded once (`python -m labkit.experiments.memory.demo`, see
data/memory/README.md); the page reads the recording. Step through one case:"""

COUNTEREXAMPLE = """## 2. A conditioned lesson, and the counterexample run for real

The lesson "multi-tenant cache keys must cover the tenant boundary" is written to the store
only from a kept, validated change in a real cache-isolation run. Applied where its
condition fails — a public catalogue, one price for everyone — adding `user_id` to the key
changes nothing about correctness and a lot about the cache (the run and the probes were recorded
once, `python -m labkit.experiments.memory.counterexample`; the intervals, the lesson and the
retrievals are computed from the recording as the page opens):"""

SKILLS = """## 3. A verified skill library with progressive disclosure

**Synthetic skills**, each checked by a real oracle (its code run in a separate process
against an independent reference) before it may be stored. L1 is one metadata line per
skill, always in the prompt; L2 the full text of the top retrieved skills; L3 one bundled
file on demand. What grows with the library is L1 (recorded once, `python -m
labkit.experiments.memory.skills_measure`; the page reads the recording):"""

REPLAY = """## 4. Raw transcript vs distilled lesson; replay and hindsight (simulated)

A raw transcript carries its rejected actions into the next task; the distilled lesson
comes back only where its preconditions hold. A replayed example helps only when the
retrieval is right; hindsight relabelling turns failed trajectories into examples."""


def retrieval_md(title: str, got: Retrieval) -> str:
    """One retrieval: what came back as a candidate explanation, what was withheld and why."""
    lines = [f"**{title}**", ""]
    lines += [
        f"- ✅ candidate explanation (verify before acting): *{c.entry.experience.lesson}* — "
        f"{c.check.reason}; source {c.entry.experience.source}"
        for c in got.candidates
    ]
    lines += [f"- ⛔ withheld: *{e.experience.lesson}* — {check.reason}" for e, check in got.withheld]
    return "\n".join(lines)


def counterexample_md(run: Run) -> str:
    """The measured counterexample: both keys on both databases, and the store's two retrievals."""
    t = run.result.table()
    head = (
        "| database | key | cache entries (95% CI) | hit rate (95% CI) | wrong prices served |\n|---|---|---|---|---|"
    )
    rows = [
        f"| {r['database']} | `{r['key']}` | {r['cache entries']} ({r['entries 95% CI']}) | "
        f"{r['hit rate']:.3f} ({r['hit rate 95% CI']}) | {r['wrong prices served']:.3f} |"
        for r in t.iter_rows(named=True)
    ]
    m = run.result.mix
    from labkit.experiments.memory.counterexample import WRONG

    lesson = run.store.entries()[0].experience
    return "\n".join(
        [
            f"Measured on the case's own `PriceService` under a seeded request mix ({m.requests:,} requests, "
            f"{m.users} users, {m.products} products, Zipf popularity; {len(m.seeds)} seeds):",
            "",
            head,
            *rows,
            "",
            f"❌ Wrong generalisation: *{WRONG}* — {lesson.rejected[0][1]}.",
            "",
            "The store keeps the conditioned lesson and re-checks its preconditions on every retrieval:",
            "",
            f"- contract prices (multi-tenant, values differ per tenant): "
            f"{'returned as a candidate explanation' if run.tenant else 'withheld'}",
            *[f"- public catalogue: withheld — {check.reason}" for _, check in run.catalogue.withheld],
        ]
    )


def reflexion_pages(demo: Demo) -> tuple[list[str], list[str]]:
    """(labels, HTML pages): per trial of the stepped case, what the actor read from the buffer and
    whether the held state was hidden-correct after the trial."""
    labels, pages = [], []
    for t in demo.trials:
        text = html.escape(t.text) or "(empty: nothing reflected yet)"
        verdict = "—" if t.correct is None else ("hidden tests pass" if t.correct else "hidden tests fail")
        labels.append(f"trial {t.trial}")
        pages.append(
            f"<h4>Trial {t.trial}</h4><p>Prepended buffer ({t.tokens} tokens, {t.dropped} older reflection(s) "
            f"truncated):</p><pre style='white-space:pre-wrap'>{text}</pre>{_tried_html(t)}"
            f"<p>After the trial: <b>{verdict}</b></p>"
        )
    return labels, pages


def _tried_html(t: Trial) -> str:
    """The patch the actor tried this trial and what the visible tests decided about it."""
    said = f"<b>{html.escape(t.decision)}</b> — {html.escape(t.reason)}" if t.decision else "—"
    if not t.tried:
        return f"<p>Patch tried: none. Decision: {said}</p>"
    kind = {"fix": "the fix", "wrong": "a wrong explanation"}.get(t.kind, t.kind)
    return (
        f"<p>Patch tried: <code>{html.escape(t.tried)}</code> ({kind}, as the SIMULATED actor picked it):</p>"
        f"{diff_html(t.diff)}"
        f"<p>Visible tests: {said}</p>"
    )


def reflexion_demo() -> Demo:
    """The notebook's Reflexion run: the buffer arm on the first 3 repair cases (SIMULATED actor, real
    pytest verdicts), read from its recording in data/memory/ (`labkit.experiments.memory.demo`
    made it; tests/test_memory_demo.py reruns it and compares exactly): nothing runs on open."""
    from labkit.experiments.memory import demo

    return demo.load()


def reflexion_stepper(demo: Demo) -> tuple[str, Stepper]:
    """(caption, stepper): trial by trial through what the stepped case's actor read from the buffer."""
    labels, pages = reflexion_pages(demo)
    return f"**Case `{demo.case}`** — {demo.title}", Stepper(len(pages), labels, unit="trial", pages=pages)


def counterexample_run() -> Run:
    """The counterexample on the notebook's seeded request mix, from its recording in data/memory/ (the
    real run's kept correction and the probes' per-seed rows; intervals, lesson and retrievals are
    computed from them here). tests/test_memory_counterexample_record.py runs it again and compares."""
    from labkit.experiments.memory import counterexample

    return counterexample.load()


def counterexample_section(run: Run) -> str:
    """The measured cache numbers and the store's retrieval for the public-catalogue task."""
    title = "Retrieval for the public-catalogue task (preconditions re-checked)"
    return counterexample_md(run) + "\n\n" + retrieval_md(title, run.catalogue)


def skills_html() -> str:
    """Prompt tokens per disclosure level, then retrieval precision, as the library grows (one
    run, shown as two narrow tables so nothing is clipped at a laptop's width), read from its
    recording in data/memory/ (tests/test_memory_skills_record.py measures again and compares)."""
    from labkit.experiments.memory import skills_measure as skills

    m = skills.load()
    short = {c: c.replace(" tokens", "").replace(" (", ", ").rstrip(")") for c in m.columns if "tokens" in c}
    costs = m.select(
        "skills",
        pl.col("refused by the gate").alias("refused"),
        "composites",
        *[pl.col(c).round(1).alias(n) for c, n in short.items()],
    )
    hits = m.select("skills", "tasks", *[c for c in m.columns if c.startswith(("precision", "recall"))])
    return "".join(
        [
            "<p><b>Mean prompt tokens per task, by disclosure level</b> (refused: candidates the gate turned away)</p>",
            frame_html(costs, digits=1),
            "<p><b>Retrieval on held-out tasks</b> (precision@1 low: the 95% bootstrap lower bound)</p>",
            frame_html(hits),
        ]
    )


def replay_html(run: Run) -> str:
    """Raw transcript vs distilled lesson, experience-following, hindsight: three SIMULATED runs."""
    from labkit.experiments.cache_isolation import case
    from labkit.experiments.memory import simulated_effects as replay

    p = replay.pollution(run.store, case().environment)
    rows = pl.DataFrame(
        [
            {
                "arm": a,
                "success": p.success[a].estimate,
                "95% CI": f"{p.success[a].low:.3f}–{p.success[a].high:.3f}",
                "acted on a rolled-back action": p.rejected_copied[a].estimate,
            }
            for a in p.success
        ]
    )
    her = replay.hindsight()
    hindsight = "; ".join(f"{k}: {v.estimate:.3f} ({v.low:.3f}–{v.high:.3f})" for k, v in her.items())
    return "".join(
        [
            "<p><b>Next-task success (simulated actor, p_copy = 0.6, p_own = 0.6)</b></p>",
            frame_html(rows),
            "<p><b>Experience-following: success vs retrieval quality</b></p>",
            frame_html(replay.experience_following()),
            f"<p><b>Hindsight relabelling</b> — {html.escape(hindsight)}</p>",
        ]
    )

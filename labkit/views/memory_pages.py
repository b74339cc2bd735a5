"""Pages for the memory notebook (and the cache notebook's counterexample): prepared here,
shown by the notebooks; nothing is recomputed when a widget moves."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

    from labkit.experiments.memory.counterexample import Run
    from labkit.loop.memory.episodic import Reflexion
    from labkit.loop.memory.store import Retrieval

__all__ = ["counterexample_md", "reflexion_pages", "retrieval_md"]


def retrieval_md(title: str, got: Retrieval) -> str:
    """One retrieval: what came back as a candidate explanation, what was withheld and why."""
    lines = [f"**{title}**", ""]
    lines += [f"- ✅ candidate explanation (verify before acting): *{c.entry.experience.lesson}* — "
              f"{c.check.reason}; source {c.entry.experience.source}" for c in got.candidates]  # fmt: skip
    lines += [f"- ⛔ withheld: *{e.experience.lesson}* — {check.reason}" for e, check in got.withheld]
    return "\n".join(lines)


def counterexample_md(run: Run) -> str:
    """The measured counterexample: both keys on both databases, and the store's two retrievals."""
    t = run.result.table()
    head = "| database | key | cache entries (95% CI) | hit rate (95% CI) | wrong prices served |\n|---|---|---|---|---|"
    rows = [f"| {r['database']} | `{r['key']}` | {r['cache entries']} ({r['entries 95% CI']}) | "
            f"{r['hit rate']:.3f} ({r['hit rate 95% CI']}) | {r['wrong prices served']:.3f} |"
            for r in t.iter_rows(named=True)]  # fmt: skip
    m = run.result.mix
    from labkit.experiments.memory.counterexample import WRONG

    lesson = run.store.entries()[0].experience
    return "\n".join([
        f"Measured on the case's own `PriceService` under a seeded request mix ({m.requests:,} requests, "
        f"{m.users} users, {m.products} products, Zipf popularity; {len(m.seeds)} seeds):", "", head, *rows, "",
        f"❌ Wrong generalisation: *{WRONG}* — {lesson.rejected[0][1]}.", "",
        "The store keeps the conditioned lesson and re-checks its preconditions on every retrieval:", "",
        f"- contract prices (multi-tenant, values differ per tenant): "
        f"{'returned as a candidate explanation' if run.tenant else 'withheld'}",
        *[f"- public catalogue: withheld — {check.reason}" for _, check in run.catalogue.withheld],
    ])  # fmt: skip


def reflexion_pages(strategy: Reflexion, frame: pl.DataFrame, case: str) -> tuple[list[str], list[str]]:
    """(labels, HTML pages): per trial of `case`, what the actor read from the buffer and whether
    the held state was hidden-correct after the trial."""
    correct = {r["trial"]: r["correct"] for r in frame.filter(frame["case"] == case).iter_rows(named=True)}
    labels, pages = [], []
    for c, rnd, window in strategy.windows:
        if c != case:
            continue
        text = html.escape(window.text) or "(empty: nothing reflected yet)"
        after = correct.get(rnd)
        verdict = "—" if after is None else ("hidden tests pass" if after else "hidden tests fail")
        labels.append(f"trial {rnd}")
        pages.append(
            f"<h4>Trial {rnd}</h4><p>Prepended buffer ({window.tokens} tokens, {window.dropped} older reflection(s) "
            f"truncated):</p><pre style='white-space:pre-wrap'>{text}</pre><p>After the trial: <b>{verdict}</b></p>"
        )
    return labels, pages

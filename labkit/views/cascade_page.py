"""The selector cascade section of judge_bias (seed 002 §2), shared by both twins.

It reads the committed run (`labkit.experiments.judging.cascade.recorded()`): nothing is
validated on open.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from labkit.experiments.judging.cascade import recorded
from labkit.views.tables import frame_html

__all__ = ["INTRO", "section_html", "summary_md", "tiers_frame"]

INTRO = """## The selector cascade: hard checks, a blinded reviewer, then the owner

Seed 002 §2 chains three selectors. **Hard checks** first — compile, the protected tests,
constraints (here the patch cap: at most 2 hunks, 8 changed lines) — drop what is clearly wrong.
A **rubric reviewer** then judges what is hard to formalise, with the candidates' order blinded
(it sees "candidate 1", "candidate 2", in a seeded order and again reversed) and every
verdict that flips with the order kept as a disagreement. The **owner** settles business
trade-offs among the contested finalists. The whole rule — tiers, cap, rubric, owner
priorities, blinding seed — is written to the ledger as the run's first event, before any
candidate exists, and a reviewer score can never bring back a candidate that failed a hard check.

Five candidates on the cache case (`data/cache_isolation` and `data/selector_cascade`).
*Recorded real run*: every validation ran in labkit's validator and was paid; the reviewer
(a position- and verbosity-biased rubric) and the owner (priorities: bounded memory, then
smallest change) are **scripted**."""


def tiers_frame(rec: Mapping[str, Any] | None = None) -> pl.DataFrame:
    """One row per candidate: where it stopped, why, and the reviewer's score in each order."""
    rec = rec if rec is not None else recorded()
    rows = []
    for t in rec["tiers"]:
        scores = t["reviewer"]
        rows.append(
            {
                "candidate": t["name"],
                "hard check failed": t["failed"] or "none",
                "why": t["reason"],
                "changed lines": t["lines"],
                "reviewer, order 1 (of 5)": round(scores[0], 2) if scores else None,
                "reviewer, order 2 (of 5)": round(scores[1], 2) if scores else None,
                "reached": t["reached"],
                "selected": "yes" if t["name"] == rec["winner"] else "",
            }
        )
    return pl.DataFrame(rows)


def summary_md(rec: Mapping[str, Any] | None = None) -> str:
    rec = rec if rec is not None else recorded()
    failed = [t for t in rec["tiers"] if t["failed"]]
    flips = "; ".join(rec["disagreements"]) or "none"
    why = ", ".join(f"{t['name']}: {t['failed']}" for t in failed)
    return (
        f"**Selected: {rec['winner']}** (decided by the {rec['decided_by']}). "
        f"{len(failed)} of {len(rec['tiers'])} candidates failed a hard check "
        f"({why}) and never reached the reviewer. "
        f"Kept disagreements (the reviewer's verdict flipped with the order): {flips}. "
        f"Paid: {rec['cost_units']:g} cost units (one per validation; the uncompilable candidate was never run). "
        f"Without the hard gate the same reviewer and owner would have picked **{rec['ungated_pick']}**, "
        f"which failed its constraint. Rule digest `{rec['rule']}`, registered first. "
        f"Regenerate: `{rec['command']}`."
    )


def section_html(rec: Mapping[str, Any] | None = None) -> str:
    rec = rec if rec is not None else recorded()
    return frame_html(tiers_frame(rec), 2)

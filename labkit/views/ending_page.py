"""The "ending a task" section of memory (seed 002 §8), shared by both twins.

It reads the committed run (`labkit.experiments.memory.ending_run.recorded()`): nothing runs on open.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from labkit.experiments.memory.ending_run import recorded
from labkit.views.tables import frame_html

__all__ = ["INTRO", "candidates_html", "exposure_html", "summary_md"]

INTRO = """## 9. Ending a task: experience candidates, findings, and the exposure label

Seed 002 §8: when a task ends it may *propose* experience, which the write gate decides on
later. The proposal carries the original task, the evidence (ledger events), applicability
conditions, counterexamples, an **exposure label** and the **attribution uncertainty**. A task
that did not succeed reports findings, not an "always do X" rule. Diagnostics from a sealed
final set can never become a skill or an example; if the owner explicitly authorises them as
development material, everything derived inherits the label and the final test data must be
replaced — labkit's confirmation refuses the exposed set.

*Recorded real run* on `data/api_change` (frontier search at budgets 15 and 13; routes from a
scripted generator, **simulated**; every execution, check and confirmation real)."""

_FIELDS = ("task", "outcome", "evidence", "applicability", "counterexamples", "exposure", "attribution",
           "strategy", "findings")  # fmt: skip


def _text(key: str, value: Any) -> str:
    if key == "exposure":
        v = dict(value)
        if v["origin"] == "development":
            return "development diagnostics only"
        return f"sealed final set {v['final_set']}" + (
            f", authorised by {v['authorised_by']}" if v["authorised_by"] else ""
        )
    if key == "findings":
        return "; ".join(f"{f['kind']}: {f['observation']}" for f in value) or "—"
    if isinstance(value, list):
        return "; ".join(str(v) for v in value) or "—"
    return str(value) or "— (none: see findings)"


def _words(frame: pl.DataFrame) -> pl.DataFrame:
    """The recording's words as a class reads them: no "budget_exhausted", arrows as arrows."""
    return frame.with_columns(
        pl.col(pl.Utf8)
        .str.replace_all("budget_exhausted", "out of budget", literal=True)
        .str.replace_all(" -> ", " → ", literal=True)
    )


def candidates_html(rec: Mapping[str, Any] | None = None) -> str:
    """Both runs' experience candidates, field by field."""
    rec = rec if rec is not None else recorded()
    frame = pl.DataFrame(
        {
            "field": list(_FIELDS),
            "budget 15 (success)": [_text(k, rec["success"][k]) for k in _FIELDS],
            "budget 13 (incomplete)": [_text(k, rec["incomplete"][k]) for k in _FIELDS],
        }
    )
    return frame_html(_words(frame))


def exposure_html(rec: Mapping[str, Any] | None = None) -> str:
    """Every attempt to turn material into a skill/example, and what each derived artifact carries."""
    rec = rec if rec is not None else recorded()
    rows = [
        {"attempt": r["attempt"], "outcome": "refused", "exposure label": "—", "why": r["why"]} for r in rec["refusals"]
    ]
    rows.append(
        {
            "attempt": "successful task -> skill",
            "outcome": "made",
            "why": rec["skill"]["text"],
            "exposure label": _text("exposure", rec["skill"]["exposure"]),
        }
    )
    for d in rec["derived"]:
        rows.append(
            {
                "attempt": f"authorised sealed material -> {d['kind']}",
                "outcome": "made",
                "why": d["text"],
                "exposure label": _text("exposure", d["exposure"]),
            }
        )
    rows.append(
        {
            "attempt": "search again, same final set",
            "outcome": rec["exposed_confirmation"].split(":")[0],
            "exposure label": f"final set {rec['final_set']}",
            "why": rec["exposed_confirmation"],
        }
    )
    r = rec["replaced"]
    rows.append(
        {
            "attempt": "search again, replaced final test data",
            "outcome": f"{r['status']} ({'confirmed' if r['confirmed'] else 'not confirmed'})",
            "exposure label": f"final set {r['final_set']}",
            "why": "data/ending_task/test_final_v2.py",
        }
    )
    return frame_html(_words(pl.DataFrame(rows).select("attempt", "outcome", "exposure label", "why")))


def summary_md(rec: Mapping[str, Any] | None = None) -> str:
    rec = rec if rec is not None else recorded()
    return (
        f"{len(rec['refusals'])} refusals, {len(rec['derived'])} derived artifacts all labelled with the "
        f"sealed final set {rec['final_set']}; the exposed set refused to confirm, the replaced one "
        f"({rec['replaced']['final_set']}) confirmed. Regenerate: `{rec['command']}`."
    )

"""A run to take home: its steps and its ledger as CSV, Parquet or JSON bytes.

A notebook offers these through `mo.download`; the frames are the same ones the step
cards were built from, so what a student downloads is what they stepped through.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Literal

import polars as pl

from labkit.views.report import step_verdict, what_changed

if TYPE_CHECKING:
    from labkit.grading.acceptance import AcceptanceSuite
    from labkit.loop.engine import Trace

__all__ = ["FORMATS", "Format", "encode", "steps_frame"]

Format = Literal["csv", "parquet", "json"]
FORMATS: dict[str, str] = {  # format -> mimetype
    "csv": "text/csv",
    "parquet": "application/vnd.apache.parquet",
    "json": "application/json",
}


def steps_frame(trace: Trace, suite: AcceptanceSuite) -> pl.DataFrame:
    """One row per step: round, candidate, decision and why, what changed, tests passed per group."""
    rows = []
    for step in range(len(trace.rounds) + 1):
        rnd = trace.rounds[step - 1] if step else None
        verdict = step_verdict(trace, step)
        row: dict[str, object] = {
            "run_id": trace.run_id,
            "step": step,
            "round": rnd.index if rnd else 0,
            "candidate": (rnd.patched or rnd.candidate).label if rnd else trace.start.label,
            "decision": rnd.decision.decision.value if rnd else "reflect",
            "why": rnd.decision.reason if rnd else "",
            "what_changed": what_changed(trace, step),
            "hypothesis": rnd.reflection.record.hypothesis.cause if rnd and rnd.reflection.record else "",
            "diff": rnd.reflection.patch.diff if rnd and rnd.reflection.patch else "",
            "raw_reply": rnd.reflection.raw if rnd else "",
            "cost_so_far": rnd.usage.cost_units if rnd else 0.0,
            "reflector": trace.reflector,
            "simulated": trace.simulated,
        }
        for group in suite.groups:
            ok, n = suite.score(verdict, group)
            row[f"{group} passed"] = f"{ok}/{n}"
        rows.append(row)
    return pl.DataFrame(rows)


def encode(frame: pl.DataFrame, fmt: Format) -> bytes:
    """`frame` (flat columns, as steps_frame and a ledger frame are) as a file's bytes."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown download format {fmt!r}; choose one of {sorted(FORMATS)}")
    buf = io.BytesIO()
    if fmt == "parquet":
        frame.write_parquet(buf)
    elif fmt == "json":
        frame.write_json(buf)
    else:
        frame.write_csv(buf)
    return buf.getvalue()

"""Tables for the lessons notebook: each one lays out what a run recorded, nothing recomputed."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import TYPE_CHECKING

import polars as pl

from labkit.record.events import Kind
from labkit.views.stepper import Stepper

if TYPE_CHECKING:
    from labkit.experiments.lessons.coverage import Arm
    from labkit.experiments.lessons.effects import Story
    from labkit.experiments.lessons.test_change import Walkthrough
    from labkit.loop.bound import ToolRun
    from labkit.loop.effects import EffectStep
    from labkit.loop.layer_metrics import LayerMetrics

__all__ = ["checkpoint_frame", "coverage_frame", "effect_browser", "effect_frame", "metrics_frame", "revalidation_frame",
           "tool_frame", "units_frame"]  # fmt: skip


def coverage_frame(arms: Sequence[Arm]) -> pl.DataFrame:
    return pl.DataFrame({
        "acceptance": [f"{a.name} ({a.protective} protective tests)" for a in arms],
        "engine's decision on 'disable the cache'": [a.decision for a in arms],
        "run ends holding": [a.kept for a in arms],
        "green for the loop": [a.visible_green for a in arms],
        "green on the full acceptance": [a.full_green for a in arms],
        "why": [a.reason for a in arms],
    })  # fmt: skip


def revalidation_frame(w: Walkthrough) -> pl.DataFrame:
    rows = w.outcome.revalidated
    return pl.DataFrame({
        "candidate": [r.label for r in rows], "digest": [r.candidate for r in rows],
        "resolved under the old test": [r.old_resolved for r in rows],
        "resolved under the new test": [r.new_resolved for r in rows],
    })  # fmt: skip


def tool_frame(runs: Sequence[ToolRun]) -> pl.DataFrame:
    return pl.DataFrame({
        "reflector": [r.reflector for r in runs], "actions": [r.actions for r in runs],
        "spent (cost units)": [r.spent for r in runs], "new evidence": [r.new_evidence for r in runs],
        "error classes seen": [", ".join(sorted({str(o.error_class) for o in r.history})) for r in runs],
        "outcome": [r.outcome for r in runs],
    })  # fmt: skip


def effect_frame(s: Story) -> pl.DataFrame:
    return pl.DataFrame({"step": [a for a, _ in s.steps], "outcome": [o for _, o in s.steps]})


def checkpoint_frame(s: Story) -> pl.DataFrame:
    cps = s.checkpoints
    return pl.DataFrame({
        "checkpoint": [c.name for c in cps], "code version": [c.code_version for c in cps],
        "dependency image": [c.dependency_image for c in cps], "environment": [c.environment for c in cps],
        "pending external actions": [", ".join(f"{p['key']} ({p['state']})" for p in c.pending) or "—" for c in cps],
        "event position": [c.position for c in cps],
    })  # fmt: skip


def units_frame(m: LayerMetrics) -> pl.DataFrame:
    return pl.DataFrame({
        "unit": [r.unit for r in m.rows], "status": [r.status for r in m.rows], "why": [r.reason for r in m.rows],
        "trusted": [r.trusted for r in m.rows], "candidates": [r.candidates for r in m.rows],
        "cost": [r.cost for r in m.rows], "duplicated effects": [r.duplicates for r in m.rows],
        "takeovers": [r.takeovers for r in m.rows],
    })  # fmt: skip


def metrics_frame(m: LayerMetrics) -> pl.DataFrame:
    cost = "—" if m.cost_per_trusted is None else f"{m.cost_per_trusted:.2f}"
    return pl.DataFrame({
        "metric": ["trusted completion rate", "candidates per task", "cost per trusted completion",
                   "duplicated side effects", "no-progress stops", "human takeovers"],
        "value": [f"{m.trusted}/{m.units} = {m.trusted_rate:.2f}", f"{m.candidates_per_task:.2f}", cost,
                  str(m.duplicated_side_effects), str(m.no_progress_stops), str(m.human_takeovers)],
    })  # fmt: skip


def _effect_page(s: EffectStep) -> str:
    d = s.detail
    if s.kind == Kind.EFFECT:
        what = f"<b>{d.get('mode')}</b> key <code>{d.get('key')}</code> → <b>{d.get('outcome')}</b>"
        if d.get("error_class"):
            what += f" ({d['error_class']})"
    elif s.kind == Kind.CHECKPOINT:
        what = (f"<b>checkpoint</b>: {escape(str(d.get('reason')))} — code <code>{d.get('code_version')}</code>, "
                f"image <code>{d.get('dependency_image')}</code>, event position {d.get('position')}")  # fmt: skip
    else:
        what = f"<b>stop</b>: {d.get('status')} — {escape(str(d.get('reason')))}"
    return (f"<div class='labkit-step'><h3>Event #{s.seq}: {s.kind}</h3><p>{what}</p>"
            f"<p>budget spent so far: <b>{s.spent:g}</b> · delivered: <b>{', '.join(s.delivered) or 'nothing'}</b>"
            f" · pending: <b>{', '.join(s.pending) or 'nothing'}</b></p></div>")  # fmt: skip


def effect_browser(steps: Sequence[EffectStep]) -> Stepper:
    """A Stepper over a recorded effect run (marimo: wrap in mo.ui.anywidget)."""
    return Stepper(len(steps), [s.kind for s in steps], unit="event", pages=[_effect_page(s) for s in steps])

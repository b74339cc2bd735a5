"""Layer metrics for in-task evolution (seed 002 §7), read from ledgers only.

Over a list of experimental units assigned before the runs (`loop.units`):

- trusted completion rate: units that ended "success", confirmed by a check the candidate's
  author did not see when that unit had one (a search's sealed confirmation), with no
  duplicated side effect — over **every** assigned unit (invalid_environment and not
  returned stay in the denominator);
- candidates per task: candidates executed (every child step 4 built — a search branch, an
  engine round's patch or rewrite — and tool commands tried), all branches of one task
  counted inside that one unit;
- cost per trusted completion: every unit's settled budget cost, failures included, divided
  by the trusted completions (None when there are none);
- duplicated side effects, no-progress stops, human takeovers (escalations).

A unit is named by the "unit" of its events' details; its ending is a STOP event with a
"status" (record/events.py `StopDetail`). Searches, tool tasks and effect runs write that;
so does every one-task engine run (its run id is the unit: an arms job, a repair or cache run);
for such a run recorded before its stop said so, the same `ending.unit_end` reads it back.
Candidates and cost are counted per run and belong to the unit the run names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from labkit.loop.control.effects import duplicated_effects
from labkit.loop.control.units import UnitOutcome, completion_rate
from labkit.loop.engine.ending import unit_end
from labkit.record.events import BudgetStatus, Kind, Role

if TYPE_CHECKING:
    from labkit.record.ledger import Ledger

__all__ = ["LayerMetrics", "NO_PROGRESS", "UnitRow", "layer_metrics"]

NO_PROGRESS = ("stalled", "no_progress")  # stop reasons that mean "no progress"
_CHARGED = (BudgetStatus.SETTLED, BudgetStatus.UNKNOWN, BudgetStatus.OVERRUN)
_TOOL = (Role.TOOL, Kind.TOOL)  # a command tried; an external effect is an action, not a candidate


def _candidate(role: str, kind: str, detail: Mapping[str, object]) -> bool:
    """A candidate executed: a child built from a parent by step 4, or a tool command tried."""
    return (role, kind) == _TOOL or (role == Role.EXECUTOR and kind == Kind.GENERATE and "parent" in detail)


@dataclass(frozen=True, kw_only=True)
class UnitRow:
    unit: str
    status: str
    reason: str
    trusted: bool
    candidates: int
    cost: float
    duplicates: int
    takeovers: int


@dataclass(frozen=True, kw_only=True)
class LayerMetrics:
    rows: tuple[UnitRow, ...]
    trusted: int
    units: int
    candidates_per_task: float
    cost: float
    cost_per_trusted: float | None
    duplicated_side_effects: int
    no_progress_stops: int
    human_takeovers: int

    @property
    def trusted_rate(self) -> float:
        return self.trusted / self.units


def layer_metrics(ledger: Ledger, assigned: Sequence[str]) -> LayerMetrics:
    """The metrics over `assigned` units from what `ledger` recorded (a unit with no stop is not returned)."""
    wanted = set(assigned)
    unit_of_run: dict[str, str] = {}
    stops: dict[str, dict[str, object]] = {}
    takeovers: dict[str, int] = dict.fromkeys(assigned, 0)
    events = ledger.events()
    for e in events:
        unit = e.detail.get("unit")
        if unit is None:
            continue
        unit_of_run.setdefault(e.run_id, str(unit))
        if e.kind == Kind.STOP and "status" in e.detail:
            stops[str(unit)] = dict(e.detail)
        if e.kind == Kind.ESCALATE and str(unit) in takeovers:
            takeovers[str(unit)] += 1
    for e in events:  # a one-task engine run recorded before its stop named its unit (e.g. data/arms)
        if e.kind == Kind.STOP and e.detail.get("run") is True and "unit" not in e.detail and e.run_id in wanted:
            stop = unit_end(
                ledger,
                e.run_id,
                str(e.detail.get("candidate", "")),
                str(e.detail.get("rule", "")),
                bool(e.detail.get("error")),
            )
            unit_of_run.setdefault(e.run_id, e.run_id)
            stops.setdefault(e.run_id, {**e.detail, **stop})
    cands: dict[str, int] = dict.fromkeys(assigned, 0)
    cost: dict[str, float] = dict.fromkeys(assigned, 0.0)
    for e in events:
        unit = str(e.detail.get("unit", unit_of_run.get(e.run_id)))
        if unit in cands and _candidate(e.role, e.kind, e.detail):
            cands[unit] += 1
        if e.role == Role.BUDGET and e.detail.get("status") in _CHARGED and unit_of_run.get(e.run_id) in cost:
            cost[unit_of_run[e.run_id]] += e.cost_units
    rows = []
    for u in assigned:
        stop = stops.get(u, {"status": "not_returned", "reason": "no stop recorded"})
        runs = [r for r, unit in unit_of_run.items() if unit == u]
        dup = sum(duplicated_effects(ledger, r) for r in runs)
        ok = stop["status"] == "success" and stop.get("confirmed", True) is True and dup == 0
        # an engine run's stop names its rule ("budget", "stalled", ...); its reason is a sentence
        why = stop.get("rule") if stop.get("run") is True and stop.get("rule") else stop.get("reason", "")
        rows.append(
            UnitRow(
                unit=u,
                status=str(stop["status"]),
                reason=str(why),
                trusted=ok,
                candidates=cands[u],
                cost=cost[u],
                duplicates=dup,
                takeovers=takeovers[u],
            )
        )
    outcomes = [
        UnitOutcome(r.unit, "success" if r.trusted else "failed" if r.status == "success" else r.status)  # type: ignore[arg-type]
        for r in rows
        if r.status != "not_returned"
    ]
    trusted, n = completion_rate(assigned, outcomes)
    total = sum(cost.values())
    return LayerMetrics(
        rows=tuple(rows),
        trusted=trusted,
        units=n,
        candidates_per_task=sum(cands.values()) / n,
        cost=total,
        cost_per_trusted=total / trusted if trusted else None,
        duplicated_side_effects=sum(r.duplicates for r in rows),
        no_progress_stops=sum(r.reason in NO_PROGRESS for r in rows),
        human_takeovers=sum(takeovers.values()),
    )

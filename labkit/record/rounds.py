"""A ledger read per round: what was decided and what it cost, each charge counted once.

A run's events repeat their charges: the acting role (validator, reflector, ...) records its
usage, and when the run has a budget, the budget records the same charge again as a "budget"
event. A plain sum of a run's `cost_units` therefore doubles. Here a run's spend is counted
from one side only: the budget's settled charges when the run had a budget (what it was
charged, including bounds charged for unknown usage), else the acting roles' own usage.
The decision of each round comes out of the `decide` events' detail into a column.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from labkit.core.types import Usage
from labkit.record import outcomes
from labkit.record.events import BudgetStatus, Event, Kind, Role

if TYPE_CHECKING:
    import polars as pl

__all__ = ["RoundRow", "round_rows", "rounds_frame"]

_CHARGED = (BudgetStatus.SETTLED, BudgetStatus.UNKNOWN, BudgetStatus.OVERRUN)


@dataclass(kw_only=True)
class RoundRow:
    """One round of one run: its decisions, the run's stop if it came here, and its spend."""

    run_id: str
    round: int
    decision: str = ""  # "keep", or "case: keep; case: roll back" in a suite of cases
    reason: str = ""
    stop: str = ""  # the run's stop reason, on the round it stopped at
    usage: Usage = field(default_factory=Usage)
    counted_from: str = "actions"  # "budget" (the run had one) or "actions" (the acting roles)


def round_rows(events: list[Event]) -> list[RoundRow]:
    """Per run and round, in the order runs first appear."""
    by_run: dict[str, list[Event]] = defaultdict(list)
    for e in events:
        by_run[e.run_id].append(e)
    rows: list[RoundRow] = []
    for run_id, mine in by_run.items():
        budgeted = any(e.role == Role.BUDGET for e in mine)
        table: dict[int, RoundRow] = {}
        for e in mine:
            row = table.setdefault(e.round, RoundRow(run_id=run_id, round=e.round))
            if budgeted:
                row.counted_from = "budget"
                if e.role == Role.BUDGET and e.detail.get("status") in _CHARGED:
                    row.usage = row.usage + e.usage
            elif e.role != Role.BUDGET:
                row.usage = row.usage + e.usage
            if e.kind == Kind.STOP and (e.detail.get("run") or e.role == Role.SEARCH):
                row.stop = str(e.detail.get("reason", ""))
        decisions: dict[int, list[tuple[str, str, str]]] = defaultdict(list)
        for decided in outcomes.decisions(mine):
            decisions[decided.round].append((decided.case, decided.decision, decided.reason))
        for r, made in decisions.items():
            several = len(made) > 1
            table[r].decision = "; ".join(f"{c}: {d}" if several else d for c, d, _ in made)
            table[r].reason = "; ".join(f"{c}: {why}" if several else why for c, _, why in made)
        rows += [table[r] for r in sorted(table)]
    return rows


def rounds_frame(events: list[Event]) -> pl.DataFrame:
    """`round_rows` as a frame: run_id, round, decision, reason, stop, the usage columns and
    counted_from. Summing `cost_units` over it counts every charge once."""
    import polars as pl

    return pl.DataFrame(
        [
            {
                "run_id": r.run_id,
                "round": r.round,
                "decision": r.decision,
                "reason": r.reason,
                "stop": r.stop,
                "tokens": r.usage.tokens,
                "calls": r.usage.calls,
                "wall_seconds": r.usage.wall_seconds,
                "cost_units": r.usage.cost_units,
                "counted_from": r.counted_from,
            }
            for r in round_rows(events)
        ],
        schema={
            "run_id": pl.Utf8,
            "round": pl.Int64,
            "decision": pl.Utf8,
            "reason": pl.Utf8,
            "stop": pl.Utf8,
            "tokens": pl.Int64,
            "calls": pl.Int64,
            "wall_seconds": pl.Float64,
            "cost_units": pl.Float64,
            "counted_from": pl.Utf8,
        },
    )

"""Experimental units: what the denominator counts (seed 002 §3–§4).

A unit is one task (or one run) assigned before the experiment starts. Branches of a
search and retries of an action belong to the unit that spawned them; they never add
units. The main analysis counts every assigned unit: a run marked `invalid_environment`,
one whose mechanism never activated or one that never returned stays in the
denominator — it is simply not a success.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from labkit.core.errors import UnitError
from labkit.record.events import Role

if TYPE_CHECKING:
    from labkit.record.ledger import Event

__all__ = ["UnitError", "UnitOutcome", "UnitStatus", "completion_rate", "units_in", "units_of"]

UnitStatus = Literal["success", "incomplete", "failed", "invalid_environment", "not_returned"]
_STATUSES = ("success", "incomplete", "failed", "invalid_environment", "not_returned")


@dataclass(frozen=True)
class UnitOutcome:
    unit: str
    status: UnitStatus

    def __post_init__(self) -> None:
        if self.status not in _STATUSES:
            raise UnitError(f"unit {self.unit!r}: status {self.status!r} is not one of {_STATUSES}")


def completion_rate(assigned: Sequence[str], outcomes: Iterable[UnitOutcome]) -> tuple[int, int]:
    """(successes, denominator) over every assigned unit; a unit with no outcome counts as
    not returned. Nothing is filtered out: invalid_environment stays in the denominator."""
    seen: dict[str, UnitOutcome] = {}
    for o in outcomes:
        if o.unit in seen:
            raise UnitError(f"unit {o.unit!r} has two outcomes: a retry or branch is not a new unit")
        if o.unit not in assigned:
            raise UnitError(f"unit {o.unit!r} was not assigned before the experiment started")
        seen[o.unit] = o
    return sum(seen[u].status == "success" for u in assigned if u in seen), len(assigned)


def units_in(details: Iterable[Mapping[str, object]]) -> frozenset[str]:
    """The distinct units named by ledger event details (their "unit" field)."""
    return frozenset(str(d["unit"]) for d in details if "unit" in d)


def units_of(events: Iterable[Event]) -> frozenset[str]:
    """The units named by a run's search and control-plane events (roles SEARCH and CONTROL):
    a search's branches and its retries all name the one task."""
    return units_in(e.detail for e in events if e.role in (Role.SEARCH, Role.CONTROL))

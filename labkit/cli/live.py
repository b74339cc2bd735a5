"""A ledger that also tells the terminal, as it records them, each round's decision and why."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from labkit.record import outcomes
from labkit.record.events import Kind, Role
from labkit.record.ledger import Event, Ledger

__all__ = ["LiveLedger", "describe"]


class LiveLedger(Ledger):
    """Records as a Ledger does; after each `decide` or `stop` event calls `show(event)`."""

    def __init__(self, path: str | Path, show: Callable[[Event], None]) -> None:
        super().__init__(path)
        self._show = show

    def record(self, run_id: str, round: int, role: str, kind: str, **kw: Any) -> Event:
        event = super().record(run_id, round, role, kind, **kw)
        self._tell([event])
        return event

    def record_many(self, events: Iterable[Mapping[str, Any]]) -> list[Event]:
        stored = super().record_many(events)
        self._tell(stored)
        return stored

    def _tell(self, events: Iterable[Event]) -> None:
        for event in events:
            if outcomes.is_decision(event) or (event.role == Role.DECISION and event.kind == Kind.STOP):
                self._show(event)


def describe(event: Event) -> str:
    from labkit.record.usage import readable

    if event.kind == Kind.STOP:
        return f"stop after round {event.round}: {readable(str(event.detail.get('reason', '')))}"
    (decided,) = outcomes.decisions([event])
    return f"round {event.round}: {decided.decision} — {readable(decided.reason)}"

"""What `repair.moves` and `repair.label` read of a run: a live `EngineRun`, or a run read back
from its recorded ledger (`labkit.experiments.repair_recording.RecordedRepairRun`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import polars as pl

    from labkit.record.outcomes import Decided

__all__ = ["LedgerRun"]


class LedgerRun(Protocol):
    """A run whose numbers come from its ledger's events (the strategy's name, whether it was simulated, its decisions)."""

    @property
    def simulated(self) -> bool: ...

    @property
    def strategy(self) -> str: ...

    def correctness(self, field: str = "correct") -> pl.DataFrame: ...

    def events(self) -> pl.DataFrame: ...

    def decisions(self, case: str | None = None) -> tuple[Decided, ...]: ...

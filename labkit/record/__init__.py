"""record: what happened and what it cost: the append-only ledger and the reserve/settle budget."""

from labkit.core.lazy import attach

__getattr__, __dir__ = attach(
    __name__,
    {
        "Budget": "labkit.record.budget",
        "Charge": "labkit.record.budget",
        "Event": "labkit.record.ledger",
        "Ledger": "labkit.record.ledger",
        "Operation": "labkit.record.budget",
        "Reservation": "labkit.record.budget",
        "limits": "labkit.record.budget",
        "new_run_id": "labkit.record.ledger",
    },
)

__all__ = [
    "Budget",
    "Charge",
    "Event",
    "Ledger",
    "Operation",
    "Reservation",
    "limits",
    "new_run_id",
]

"""record: what happened and what it cost: the append-only ledger and the reserve/settle budget."""

"""Memory across tasks: what a strategy reads and a gated step writes (SPEC §9).

- `store`: the conditioned experience store (ledger-backed, write gate, re-checked retrieval).
"""

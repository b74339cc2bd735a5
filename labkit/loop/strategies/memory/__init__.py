"""Memory across tasks: what a strategy reads and a gated step writes (SPEC §9).

- `store`: the conditioned experience store (on the ledger; write gate: a kept, validated
  change, never sealed-test diagnostics; retrieval re-checks preconditions and expiry);
- `episodic`: Reflexion's buffer as a strategy wrapper (reflections from the engine's verdicts,
  a token-budget window, the revision rule for refuted beliefs);
- `skills`: the verified skill library (oracle-gated, BM25 retrieval, L1/L2/L3 disclosure);
- `agent`: seed 001's `reflective_agent(oracle=None|external)` as a strategy, and `commit`.
"""

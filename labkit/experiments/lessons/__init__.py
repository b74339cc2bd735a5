"""The chapter's remaining lessons (issue 19), each a short run on case material.

- `coverage` — the coverage counterfactual on the cache case (seed 000)
- `test_change` — changing a protected test legitimately (seed 000)
- `bound_reflection` — observation-bound vs unbound reflection on a denied tool call (seed 002 §2)
- `effects` — side effects a rollback cannot undo (seed 002 §4–5)
- `metrics` — layer metrics from the ledgers of real runs (seed 002 §7)
"""

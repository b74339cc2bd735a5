"""search: frontier search under a budget (seed 002 §3).

The nouns (`frontier`); the search as a configuration of `engine.run` (`search_run`); the search
read back from the engine's events (`readback`); a search case from a folder (`search_case`); and a
recorded search step by step, and sweeps over budgets, for the notebook (`recorded`).
"""

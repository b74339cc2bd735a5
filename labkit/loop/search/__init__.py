"""search: frontier search under a budget (seed 002 §3).

The nouns (`frontier`), the host that runs a search (`host`), a search case from a folder
(`search_case`) and a recorded search read back step by step (`recorded`).
"""

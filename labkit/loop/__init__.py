"""loop: the engine and what plugs into it, one room per concern.

- `engine/`: the six steps, the runner, decisions, stop rules, resume and accounting;
- `control/`: seed 002's control plane: error classes, effects, units, the test-change gate,
  the bounded tool task, layer metrics and predictions;
- `strategies/`: what proposes (model rewrites, reflectors, hand-written patches, checkpointed
  sequences, memory wrappers);
- `search/`: frontier search under a budget, its case and its recorded steps.

Lowest first: engine < control < strategies, search (tests/test_layers.py).
"""

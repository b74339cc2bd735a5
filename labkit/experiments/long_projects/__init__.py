"""Worked example D (seed 002 §6): a long project carried by artifacts and evidence.

- `project`: the case format (data/long_projects/<name>/project.json) and its loader;
- `items`: the work-item ledger of a project (added, closed, reopened, open);
- `roles`: planner, simulated developer, QA on a frozen snapshot, the role view of the ledger;
- `harness`: plan -> develop -> QA iterations on the engine's Recorder (every action paid and
  recorded), the hidden benchmark scored after each iteration for the reader only;
- `study`: the two comparisons (matched iterations vs matched cost; same-source vs independent
  QA) and the committed recording (python -m labkit.experiments.long_projects record);
- `merge_graph`, `merge_case`, `merge`: the Colosseum part, parts merged by their dependency
  graph (python -m labkit.experiments.long_projects.merge --record).
"""

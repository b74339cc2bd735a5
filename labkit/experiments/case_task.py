"""A Case as the engine runs it: the one way an experiment turns case material into a `Task`.

`Case` (labkit.grading.cases) sits below the engine and cannot name its `Task`; the views of a
Case the experiments use (`RepairCase`, `ArmCase`, `HumanEvalCase`) build their task here.
"""

from __future__ import annotations

from labkit.grading.cases import Case
from labkit.loop.engine.trace import Task

__all__ = ["task_of"]


def task_of(case: Case) -> Task:
    """The visible suite judged, the hidden suite only scored; the start under its state name."""
    return Task(
        id=case.name,
        start=case.start,
        suite=case.suite,
        hidden=case.hidden,
        slice=case.spec.slice,
        patch_cap=dict(case.patch_cap),
        start_state=case.start_state,
    )

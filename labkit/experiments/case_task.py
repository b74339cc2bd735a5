"""A Case as the engine runs it: the one way an experiment turns case material into a `Task`.

`Case` (labkit.grading.cases) sits below the engine and cannot name its `Task`; the views of a
Case the experiments use (`RepairCase`, `ArmCase`, `HumanEvalCase`) build their task here, and
share what they read straight from the Case through `CaseView`.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property

from labkit.grading.cases import Case, State
from labkit.loop.engine.trace import Task

__all__ = ["CaseView", "task_of"]


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


class CaseView:
    """What every view of one `Case` reads straight from it. A view is a frozen dataclass whose
    field `case` holds the Case; it adds only its own experiment's words."""

    case: Case

    @property
    def id(self) -> str:
        return self.case.name

    @property
    def title(self) -> str:
        return self.case.title

    @property
    def states(self) -> Mapping[str, State]:
        """Every state the case can reach: the start and each patch (the Case's own)."""
        return self.case.states

    @cached_property
    def task(self) -> Task:
        """The case as the engine runs it: visible suite judged, hidden suite only scored."""
        return task_of(self.case)

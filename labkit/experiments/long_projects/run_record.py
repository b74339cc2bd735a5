"""What one long-project run records: its policy, each iteration as the roles saw it, and the
hidden benchmark's scores (the reader's only). `iterations.run_project` makes them."""

from __future__ import annotations

from dataclasses import dataclass, field

from labkit.core.types import Usage
from labkit.experiments.long_projects.items import Item, Tally
from labkit.experiments.long_projects.project import QaCheck
from labkit.experiments.long_projects.roles import DeveloperParams, QaParams

__all__ = ["HiddenScore", "Iteration", "Policy", "ProjectRun"]


@dataclass(frozen=True)
class Policy:
    """The run policy: how many work items the developer takes per iteration, how often QA runs."""

    name: str
    items_per_iteration: int = 1
    qa_every: int = 1


@dataclass(frozen=True)
class HiddenScore:
    """The hidden benchmark on the held candidate after an iteration: the reader's only."""

    iteration: int
    passed: int
    total: int
    failing_requirements: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class Iteration:
    """One iteration as the roles saw it (plus its cost so far); no hidden result in here."""

    index: int
    plan: tuple[str, ...]  # the work items picked
    variants: tuple[tuple[str, str], ...]  # (requirement, variant) the developer wrote
    diff: str
    decision: str
    reason: str
    snapshot: str  # the frozen candidate's digest
    qa_ran: bool
    qa_failing: tuple[str, ...]  # QA's failing checks (node ids)
    qa_findings: tuple[str, ...]  # the requirements QA filed findings on
    items: tuple[Item, ...]  # every item after the iteration
    tally: Tally
    usage: Usage  # cumulative: calls, tokens, cost units


@dataclass(frozen=True, kw_only=True)
class ProjectRun:
    run_id: str
    policy: Policy
    qa: QaParams
    developer: DeveloperParams
    seed: int
    qa_checks: tuple[QaCheck, ...]  # what QA wrote from the requirements
    iterations: tuple[Iteration, ...]
    hidden: tuple[HiddenScore, ...]  # index 0: the start
    role_inputs: tuple[str, ...] = field(default=(), repr=False)  # every text a role was handed

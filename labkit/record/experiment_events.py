"""Detail shapes of the events the worked examples' own control planes write (beside the
engine's, in labkit.record.events): a long project's plan and QA, a merge's critiques, the
selector cascade, an exposed final set, a batch of units, an arms job's setting. labkit.record.vocabulary says which
(role, kind) carries each.
"""

from __future__ import annotations

from typing import TypedDict

from labkit.record.events import CaseDetail

__all__ = [
    "BatchDetail",
    "CritiqueDetail",
    "ExposeDetail",
    "PlanDetail",
    "QaDetail",
    "SelectDetail",
]


class CritiqueDetail(TypedDict, total=False):
    unit: str  # the merge (one policy's run)
    stage: str  # which verification stage refuted it
    check: str  # the refuted conclusion ("edge:units->format")
    part: str  # the part the repair changes
    premise: str  # the premise the repair changes ("line amounts: integer cents -> currency units")
    counterexample: str  # the smallest counterexample, as the check reported it
    why: str
    kept: bool  # the repair held on the refuted check (the engine kept it)
    simulated: bool


class BatchDetail(TypedDict, total=False):
    batch: int
    action: str  # register | start | pause | void | complete
    rule: str  # digest of the incident rule registered before the first batch
    reason: str
    environment: str  # the fingerprint the batch registered (or the one observed at an incident)
    jobs: int
    cost_units: float
    simulated: bool


class ExposeDetail(TypedDict, total=False):
    final_set: str  # digest of the sealed final suite now exposed
    authorised_by: str
    reason: str
    label: str  # the exposure label every derived artifact inherits


class SelectDetail(CaseDetail, total=False):
    tier: str  # rule | compile | tests | constraints | reviewer | owner | winner
    rule: str  # digest of the selection rule registered before any candidate existed
    name: str  # the candidate's name (the reviewer never sees it: it sees "candidate 1", "candidate 2")
    candidate: str
    passed: bool
    reason: str
    scores: dict[str, float]  # the reviewer's mean rubric score per blinded order
    disagreements: list[str]  # pairs whose reviewer verdict flipped with the order (kept, not averaged)


class PlanDetail(CaseDetail, total=False):
    iteration: int
    items: list[str]  # the work items chosen for this iteration
    added: int
    closed: int
    reopened: int
    open: int


class QaDetail(CaseDetail, total=False):
    iteration: int
    snapshot: str  # the frozen candidate's digest QA was handed
    source: str  # which QA source ("same-source", "independent")
    checks: int  # how many checks QA ran
    findings: list[str]  # requirement ids of the failing checks
    added: int
    reopened: int


class ArmDefineDetail(CaseDetail, total=False):
    """An arms job's setting (DEFINE by the EXPERIMENT role), recorded before its run."""

    arm: str
    policy: str
    limit: dict[str, float]
    upper: dict[str, float]
    keep: str
    rounds: int

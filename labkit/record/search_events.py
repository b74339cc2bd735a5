"""Search and failure shapes: the frontier search's own loop's (role SEARCH, until session 33; its
ledgers still read), the control plane's retries (role CONTROL), and the engine's classified
failures (ERROR_DECISION, role DECISION: labkit.loop.engine.failure_policy).

Part of the ledger's vocabulary (see labkit.record.events for kinds and roles, and
labkit.record.vocabulary for which shape each (role, kind) carries).
"""

from __future__ import annotations

from typing import TypedDict

from labkit.record.events import CaseDetail

__all__ = [
    "AttemptDetail",
    "BranchDetail",
    "ConfirmDetail",
    "ErrorDecisionDetail",
    "ExpandDetail",
    "QuarantineDetail",
    "SealDetail",
    "SearchDefineDetail",
    "SearchDetail",
    "SearchStopDetail",
]


class SearchDetail(CaseDetail, total=False):
    unit: str  # the experimental unit (the task): branches and retries never add units
    spent: float  # cost units charged to this step (the budget's own events carry the usage)


class SearchDefineDetail(SearchDetail, total=False):
    rule: str
    limits: dict[str, int]
    costs: dict[str, float]
    checks: str
    environment: str
    strategy: str
    reserve: float
    limit: float | None
    baseline_failures: list[str]


class ExpandDetail(SearchDetail, total=False):
    state: str
    hypothesis: str
    depth: int
    proposed: int
    kept: int
    truncated: int
    failure: str
    children: list[str]


class BranchDetail(SearchDetail, total=False):
    name: str
    parent: str
    state: str
    depth: int
    candidate: str
    outcome: str
    reason: str
    progress: dict[str, object]
    error_class: str
    resolved: bool


class SealDetail(SearchDetail, total=False):
    name: str
    state: str
    candidate: str
    evidence: str
    seal: str


class ErrorDecisionDetail(SearchDetail, total=False):
    where: str
    error_class: str
    reason: str
    action: str


class QuarantineDetail(SearchDetail, total=False):
    reason: str


class ConfirmDetail(SearchDetail, total=False):
    seal: str
    confirmed: bool | None
    reason: str


class SearchStopDetail(SearchDetail, total=False):
    status: str
    reason: str
    winner: str
    seal: str
    confirmed: bool | None
    sealed: list[str]


class AttemptDetail(TypedDict, total=False):
    unit: str
    attempt: int
    action: str
    error_class: str
    reason: str
    original_failure: str


class ErrorClassDetail(CaseDetail, total=False):
    """A failed step, classified, and what its class left the engine to do (engine.failure_policy)."""

    where: str  # propose | execute | verify
    error_class: str
    reason: str
    action: str  # continue (the child or expansion ends) | stop | quarantine
    candidate: str  # the state the failed step started from
    child: str  # the child being executed or verified ("" at propose)

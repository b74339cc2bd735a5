"""The ledger's vocabulary: every event kind and role, and the detail fields each kind carries.

Writers (the engine, the budget, the model gateway) and readers (accounting, resume, the
per-round frames and reports) name kinds through `Kind` and roles through `Role`, never as
bare string literals, so a renamed kind fails at import instead of silently matching nothing.
`Kind` and `Role` are `StrEnum`s: the values stored in the ledger are the plain strings below,
so ledgers written before this module existed read the same.

The `*Detail` TypedDicts document which keys each kind puts in an event's `detail`.
Every engine event also carries `suite` (the acceptance digest, fixed in step 1), and in a
suite of cases `case` and `slice`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypedDict

from labkit.core.types import Usage

__all__ = [
    "AlarmDetail",
    "AttemptDetail",
    "BatchDetail",
    "BranchDetail",
    "BudgetDetail",
    "BudgetStatus",
    "CONTROL_DETAILS",
    "CaseDetail",
    "CheckpointDetail",
    "ConfirmDetail",
    "CritiqueDetail",
    "DETAILS",
    "DecideDetail",
    "DefineDetail",
    "EffectDetail",
    "ErrorDecisionDetail",
    "ErrorDetail",
    "EscalateDetail",
    "Event",
    "ExpandDetail",
    "ExperimentDetail",
    "ExposeDetail",
    "GenerateDetail",
    "Kind",
    "PlanDetail",
    "QaDetail",
    "QuarantineDetail",
    "ReflectDetail",
    "RememberDetail",
    "ResumeDetail",
    "Role",
    "SEARCH_DETAILS",
    "ScoreDetail",
    "SealDetail",
    "SearchDefineDetail",
    "SearchDetail",
    "SearchStopDetail",
    "SelectDetail",
    "StartDetail",
    "StopDetail",
    "TestChangeDetail",
    "ToolDetail",
    "VerifyDetail",
    "declared",
    "undeclared",
]


class Kind(StrEnum):
    """What happened. One value per kind of event any labkit writer records."""

    START = "start"  # a run of a suite of cases begins (cases, strategy, rules)
    DEFINE = "define"  # step 1: the protected acceptance is fixed (suite digest)
    GENERATE = "generate"  # a candidate is produced (start, patched child, or a model reply)
    VERIFY = "verify"  # steps 2/5: a validator ran a candidate on the visible suite
    ALARM = "alarm"  # an integrity alarm (tampering, protected path touched)
    SCORE = "score"  # the hidden suite scored the held candidate (never shown to a strategy)
    REFLECT = "reflect"  # step 3: a strategy's proposal (record, children, failure)
    EXPERIMENT = "experiment"  # step 3: a discriminating observation asked for by a strategy
    IDLE = "idle"  # a strategy proposed nothing: the case keeps its state
    ERROR = "error"  # a model call or strategy failed; recorded, not fatal
    DECIDE = "decide"  # step 6: keep / roll back / investigate a child
    CHECKPOINT = "checkpoint"  # one step of a checkpointed sequence
    RESUME = "resume"  # a run continued from its ledger
    STOP = "stop"  # a run (or one case of it) stopped, with rule and reason
    TEST_CHANGE = "test_change"  # a protected test changed (or refused) on requirement evidence
    TOOL = "tool"  # a numbered tool call and its classified outcome
    EFFECT = "effect"  # an action with an external effect: dry run, send, reconcile
    ESCALATE = "escalate"  # control handed to a human (a takeover)
    REMEMBER = "remember"  # the experience store wrote a lesson (gated on a verified correction)
    CRITIQUE = "critique"  # a refutation kept at aggregation (a merge's refuted interface and its repair)
    BATCH = "batch"  # the control plane over a batch of units: rule registered, start, pause, void, complete
    EXPOSE = "expose"  # a sealed final set authorised as development material: it can confirm no more
    SELECT = "select"  # the selector cascade: its rule (first), then each tier's verdict on a candidate
    # -- frontier search (labkit.loop.search) and the control plane's retries ----------------
    # Search events have role SEARCH; its "define" and "stop" are DEFINE and STOP with the
    # search's own detail fields (SEARCH_DETAILS). EXECUTE and CONFIRM are also paid kinds.
    EXECUTE = "execute"  # a paid action: step 4 run in a fresh branch (apply, build)
    EXPAND = "expand"  # one state of the frontier expanded: one shared generation
    BRANCH = "branch"  # one child of an expansion: executed, verified, and what became of it
    SEAL = "seal"  # a branch passed every required check: sealed, immutable
    ERROR_DECISION = "decision"  # an error's class and the permission obeyed (end, stop, quarantine)
    QUARANTINE = "quarantine"  # an integrity alarm or unknown effect: the task stops incomplete
    CONFIRM = "confirm"  # the sealed final check set, paid from the reserve: pass/fail only
    ATTEMPT = "attempt"  # the first try of a retried action (role CONTROL)
    RETRY = "retry"  # a further try of the same action, same unit: not a new experimental unit
    # -- long projects (labkit.experiments.long_projects): plan -> develop -> QA -------------
    PLAN = "plan"  # the planner turned project state and execution evidence into work items
    QA = "qa"  # QA checked a frozen snapshot (by digest) and filed findings as items
    # A model call is a GENERATE (role: the calling role) or ERROR event written by the
    # gateway; a verdict-cache hit is a VERIFY/SCORE event with detail["cached"] True.


class Role(StrEnum):
    """Who acted. Roles only see what they need (the engine enforces it)."""

    EXPERIMENT = "experiment"
    EXECUTOR = "executor"
    VALIDATOR = "validator"
    SCORER = "scorer"
    REFLECTOR = "reflector"
    DECISION = "decision"
    BUDGET = "budget"
    MODEL = "model"
    CONTROL = "control"  # the control plane (classification, retries, test changes)
    TOOL = "tool"  # a tool the loop calls (shell, mail, ...)
    HUMAN = "human"  # a person who takes over
    MEMORY = "memory"
    SEARCH = "search"  # the frontier search's host (expansions, branches, seals, confirmation)
    PLANNER = "planner"  # a long project's planner (reads the role view, never hidden scores)
    QA = "qa"  # a long project's QA (checks a frozen snapshot by digest)


class BudgetStatus(StrEnum):
    """`detail["status"]` of a budget event (its kind is the paid action's kind)."""

    RESERVED = "reserved"
    SETTLED = "settled"
    UNKNOWN = "unknown"
    OVERRUN = "overrun"
    REFUSED = "refused"


class CaseDetail(TypedDict, total=False):
    suite: str
    case: str
    slice: str
    simulated: bool


class StartDetail(TypedDict, total=False):
    simulated: bool
    strategy: str
    cases: list[str]
    rounds: int
    keep: str
    observe: str
    recheck: int
    rules: list[str]
    case_rules: list[str]


class DefineDetail(CaseDetail, total=False):
    strategy: str
    hidden: str  # digest of the hidden suite ("" when the case has none)


class GenerateDetail(CaseDetail, total=False):
    candidate: str
    parent: str
    label: str
    state: str  # the starting state's name (round 0)
    proposal: str  # the named state the child reaches
    source: str
    files: int
    hunks: int
    lines: int


class VerifyDetail(CaseDetail, total=False):
    candidate: str
    label: str
    validator: str
    resolved: bool
    cross_checked: bool  # every required test confirmed by the independent runner
    retest: bool
    cached: bool
    why: str


class AlarmDetail(CaseDetail, total=False):
    candidate: str
    quarantined: bool


class ScoreDetail(CaseDetail, total=False):
    candidate: str
    correct: bool  # hidden scoring when the case has hidden tests, else the visible verdict
    visible: bool  # the visible verdict of the held candidate
    state: str
    scored_on: str  # "hidden" | "visible"
    cached: bool


class ReflectDetail(CaseDetail, total=False):
    unit: str
    bound: bool  # an observation-bound reflection (cites action, class, artifact, open explanations)
    action: int
    error_class: str
    artifact: str
    open: list[str]
    hypothesis: str
    next_trial: str
    strategy: str
    failure: str
    experiment: str
    prediction: list[str]  # the experiment's expected output lines, recorded before it runs
    children: int
    state: str
    note: str


class TestChangeDetail(CaseDetail, total=False):
    accepted: bool
    why: str  # why it was refused ("" when accepted)
    path: str
    proposed_by: str
    requirement: dict[str, object]  # the evidence record as given ({} when none)
    old_test: str  # digest of the test file before / after
    new_test: str
    old_suite: str  # acceptance digest before / after
    new_suite: str
    revalidated: list[dict[str, object]]  # every candidate scored under the old suite, re-run


class ToolDetail(CaseDetail, total=False):
    unit: str
    action: int  # the action number a reflection must cite
    command: str
    ok: bool
    error_class: str
    reason: str
    artifact: str


class EffectDetail(CaseDetail, total=False):
    unit: str
    action: int
    mode: str  # dry_run | send | reconcile | rollback
    key: str  # idempotency key
    target: str
    payload: str  # digest of what is sent (the same message under two keys is a duplicate)
    outcome: str  # planned | sent | deduplicated | unknown | found | not_found | ...
    error_class: str
    duplicate: bool


class EscalateDetail(CaseDetail, total=False):
    unit: str
    action: int
    error_class: str
    reason: str


class ExperimentDetail(CaseDetail, total=False):
    question: str
    exit_code: int | None
    candidate: str


class ErrorDetail(CaseDetail, total=False):
    error: str


class DecideDetail(CaseDetail, total=False):
    decision: str
    reason: str
    rule: str
    candidate: str
    proposal: str  # the named state held after the decision
    offered: str  # the child the decision is about
    cause: str  # the hypothesis behind it (restored as "rejected" on resume)
    lines: float  # changed lines kept this round (risk)
    delta_f: int
    cost_so_far: float
    children: list[dict[str, str]]  # every child's decision


class CheckpointDetail(CaseDetail, total=False):
    unit: str
    step: int
    code_version: str  # what a restore brings back (candidate digest) ...
    dependency_image: str
    environment: str
    pending: list[dict[str, object]]  # ... and what it cannot: external actions not yet settled
    position: int  # the ledger sequence number the checkpoint stands at
    applied: bool
    green: bool
    resolved: bool
    reason: str
    candidate: str


class ResumeDetail(CaseDetail, total=False):
    candidate: str
    state: str


class StopDetail(CaseDetail, total=False):
    unit: str  # the experimental unit that ended (tool and effect runs, search)
    status: str  # success | incomplete | failed | invalid_environment
    confirmed: bool  # a success held up on a check its author never saw (sealed / hidden tests)
    decision: str
    reason: str
    rule: str
    outcome: str
    candidate: str
    run: bool  # True for the whole run's stop (else the case's)
    error: str  # the error that ended the run, if one did


class RememberDetail(TypedDict, total=False):
    key: str  # the lesson's identity (its text); versions of one lesson share it
    version: int  # 1, 2, ... per key
    exposure: str  # where its diagnostics came from ("development"; sealed is never written)
    source_run: str
    source_round: int
    candidate: str  # the kept, validated candidate that verified it
    simulated: bool


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


class BudgetDetail(TypedDict, total=False):
    status: str
    reservation: int
    upper: dict[str, float]
    actual: dict[str, float] | None
    overrun: dict[str, float]
    error: str


# -- frontier search ----------------------------------------------------------------------


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


class AttemptDetail(TypedDict, total=False):
    unit: str
    attempt: int
    action: str
    error_class: str
    reason: str
    original_failure: str


SEARCH_DETAILS: dict[Kind, type] = {
    Kind.DEFINE: SearchDefineDetail, Kind.EXPAND: ExpandDetail, Kind.BRANCH: BranchDetail,
    Kind.SEAL: SealDetail, Kind.ERROR_DECISION: ErrorDecisionDetail,
    Kind.QUARANTINE: QuarantineDetail, Kind.CONFIRM: ConfirmDetail, Kind.STOP: SearchStopDetail,
}  # fmt: skip
CONTROL_DETAILS: dict[Kind, type] = {Kind.ATTEMPT: AttemptDetail, Kind.RETRY: AttemptDetail}
# --------------------------------------------------------------------------------------------


DETAILS: dict[Kind, type] = {
    Kind.START: StartDetail, Kind.DEFINE: DefineDetail, Kind.GENERATE: GenerateDetail,
    Kind.VERIFY: VerifyDetail, Kind.ALARM: AlarmDetail, Kind.SCORE: ScoreDetail,
    Kind.REFLECT: ReflectDetail, Kind.IDLE: ReflectDetail, Kind.EXPERIMENT: ExperimentDetail,
    Kind.ERROR: ErrorDetail, Kind.DECIDE: DecideDetail, Kind.CHECKPOINT: CheckpointDetail,
    Kind.RESUME: ResumeDetail, Kind.STOP: StopDetail, Kind.TEST_CHANGE: TestChangeDetail,
    Kind.TOOL: ToolDetail, Kind.EFFECT: EffectDetail, Kind.ESCALATE: EscalateDetail,
    Kind.REMEMBER: RememberDetail, Kind.PLAN: PlanDetail, Kind.QA: QaDetail,
    Kind.CRITIQUE: CritiqueDetail,
    Kind.SELECT: SelectDetail, Kind.EXPOSE: ExposeDetail, Kind.BATCH: BatchDetail,
}  # fmt: skip


def undeclared(kind: Kind, detail: Mapping[str, object], role: Role | None = None) -> list[str]:
    """Detail keys `kind` (written by `role`) does not declare (writers refuse to write them).

    A search or control-plane event is declared by SEARCH_DETAILS / CONTROL_DETAILS first,
    then DETAILS; a kind declared nowhere is refused whole (every key is reported)."""
    by_role = SEARCH_DETAILS if role is Role.SEARCH else CONTROL_DETAILS if role is Role.CONTROL else {}
    cls = by_role.get(kind) or DETAILS.get(kind)
    if cls is None:
        return sorted(detail) or [f"<kind {kind} is not declared for role {role}>"]
    return sorted(set(detail) - _inherited(cls))


def _inherited(cls: type) -> set[str]:
    out: set[str] = set()
    for base in cls.__mro__:
        out |= set(getattr(base, "__annotations__", {}))
    return out


def declared(kind: Kind, detail: Mapping[str, object]) -> dict[str, object]:
    """`detail` as a dict, or LedgerError naming the fields `kind` does not declare (write-time check)."""
    extra = undeclared(kind, detail)
    if extra:
        from labkit.core.errors import LedgerError

        raise LedgerError(f"{kind} events declare no detail field(s) {extra} (see labkit.record.events)")
    return dict(detail)


@dataclass(frozen=True)
class Event:
    """One recorded action. `evidence` and `detail` were stored as JSON text."""

    seq: int
    run_id: str
    round: int
    role: str  # executor | validator | reflector | decision | model | budget | ...
    kind: str  # generate | execute | verify | reflect | decide | alarm | ...
    input_hash: str  # "" when there was no input
    output_hash: str  # "" when there was no output
    evidence: str  # JSON text, "" if none
    tokens: int
    calls: int
    wall_seconds: float
    cost_units: float
    started_at: float
    ended_at: float
    detail: Mapping[str, Any]

    @property
    def usage(self) -> Usage:
        return Usage(self.tokens, self.calls, self.wall_seconds, self.cost_units)

    @property
    def evidence_value(self) -> Any:
        """The evidence decoded back from JSON (None when there was none)."""
        return json.loads(self.evidence) if self.evidence else None

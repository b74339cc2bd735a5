"""The ledger's vocabulary: every event kind and role, and the detail fields each kind carries.

Writers (the engine, the budget, the model gateway) and readers (accounting, resume, the
per-round frames and reports) name kinds through `Kind` and roles through `Role`, never as
bare string literals, so a renamed kind fails at import instead of silently matching nothing.
`Kind` and `Role` are `StrEnum`s: the values stored in the ledger are the plain strings below,
so ledgers written before this module existed read the same.

The `*Detail` TypedDicts declare which keys an event's `detail` may hold;
labkit.record.vocabulary says which shape each (role, kind) carries, and `Ledger.record`
refuses a field its (role, kind) does not declare. Every engine event also carries `suite`
(the acceptance digest, fixed in step 1), and in a suite of cases `case` and `slice`.
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
    "BoundReflectionDetail",
    "BudgetDetail",
    "BudgetStatus",
    "CaseDetail",
    "DecideDetail",
    "DefineDetail",
    "EffectDetail",
    "ErrorDetail",
    "EscalateDetail",
    "Event",
    "ExperimentDetail",
    "GenerateDetail",
    "Kind",
    "ProposalDetail",
    "RememberDetail",
    "RestorePointDetail",
    "ResumeDetail",
    "Role",
    "ScoreDetail",
    "StartDetail",
    "StepCheckpointDetail",
    "StopDetail",
    "TestChangeDetail",
    "ToolDetail",
    "VerifyDetail",
    "WinnerDetail",
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
    # -- frontier search (role SEARCH: its own loop's, until session 33; ledgers still read) and
    # classified failures (role DECISION: the engine's). EXECUTE and CONFIRM are also paid kinds.
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
    TOOL_REFLECTOR = "tool_reflector"  # a tool task's reflector: reads tool outcomes, picks the next command
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
    expand: str  # the expansion policy, when not "hold" (labkit.loop.engine.expand)
    limits: dict[str, int]  # with a frontier: max_depth, max_children
    prices: dict[str, float]  # ... and its price list in cost units, by budget kind
    winner_rule: str  # with the winner-plus-confirmation ending: the rule, preregistered
    limit: float | None  # with a frontier and a budget: its cost-unit limit (None: unlimited)
    reserve: float  # ... and what it holds for the confirmation


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


class ProposalDetail(CaseDetail, total=False):
    """A strategy's proposal in the engine (REFLECT or IDLE by the REFLECTOR, step 3)."""

    strategy: str
    failure: str
    experiment: str
    prediction: list[str]  # the experiment's expected output lines, recorded before it runs
    children: int
    state: str
    note: str


class BoundReflectionDetail(CaseDetail, total=False):
    """A tool task's reflection (REFLECT by the TOOL_REFLECTOR): bound when it cites the action,
    its error class, the artifact touched and the explanations still open."""

    unit: str
    bound: bool
    action: int
    error_class: str
    artifact: str
    open: list[str]
    hypothesis: str
    next_trial: str
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
    frontier: int  # states waiting on the case's frontier after the decision (expand != "hold")
    unexecuted: list[str]  # children the budget could not execute (then the run stopped)


class WinnerDetail(CaseDetail, total=False):
    """The winner-plus-confirmation ending (CONFIRM by the DECISION role): pass/fail only."""

    candidate: str
    state: str
    rule: str  # the preregistered winner rule
    confirmed: bool | None  # None: the confirmation reserve could not pay
    reason: str
    green: int  # green states the winner was chosen among


class StepCheckpointDetail(CaseDetail, total=False):
    """One step of a checkpointed sequence (CHECKPOINT by the DECISION role)."""

    step: int
    applied: bool
    green: bool
    resolved: bool
    reason: str
    candidate: str


class RestorePointDetail(CaseDetail, total=False):
    """What a restore brings back and what it cannot (CHECKPOINT by the CONTROL role)."""

    unit: str
    reason: str  # the restore point's name
    candidate: str  # the digest of the state it stands at (every part)
    code_version: str  # what a restore brings back (candidate digest) ...
    dependency_image: str
    environment: str
    pending: list[dict[str, object]]  # ... and what it cannot: external actions not yet settled
    position: int  # the ledger sequence number the checkpoint stands at


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


class BudgetDetail(TypedDict, total=False):
    status: str
    reservation: int
    upper: dict[str, float]
    actual: dict[str, float] | None
    overrun: dict[str, float]
    error: str
    short: list[str]  # the dimensions a refused reservation did not fit
    from_reserve: bool  # paid from the confirmation reserve


@dataclass(frozen=True, kw_only=True)
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

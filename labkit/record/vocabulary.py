"""Which detail fields each (role, kind) may carry: the table `Ledger.record` enforces on writing.

Every event a labkit writer records has a declared shape (a `*Detail` TypedDict of
labkit.record.events or labkit.record.search_events), chosen by who acted (role) and what
happened (kind). One (role, kind) has one shape: a kind whose meaning depends on its writer is
declared once per role (a CHECKPOINT of the engine's sequence, DECISION, is not the control
plane's restore point, CONTROL). Two families are declared by rule rather than pair by pair:

- the budget (role BUDGET) records under the kind of the action it pays for (labkit's
  writers pass a `Kind`; `Budget.reserve` accepts any label): any kind;
- the model gateway records GENERATE / ERROR under the calling role's own name (a
  `ModelRole.ROLE` such as "judge", or "model"): any role that is not one of `Role`'s
  values, or `Role.MODEL` itself, is such a model-backed role, and carries only those two kinds.

Enforcement is on writing only: ledgers recorded before a shape was narrowed still read.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

from labkit.core.errors import LedgerError
from labkit.record import events as ev
from labkit.record import experiment_events as xe
from labkit.record import model_events as me
from labkit.record import search_events as se
from labkit.record.events import Kind, Role

__all__ = ["MODEL_CALLS", "VOCABULARY", "check", "shape", "undeclared"]

VOCABULARY: dict[tuple[Role, Kind], type] = {
    # -- the engine (labkit.loop.engine.runner, labkit.loop.engine.steps) --------------------------------
    (Role.EXPERIMENT, Kind.START): ev.StartDetail,
    (Role.DECISION, Kind.DEFINE): ev.DefineDetail,
    (Role.EXECUTOR, Kind.GENERATE): ev.GenerateDetail,
    (Role.VALIDATOR, Kind.VERIFY): ev.VerifyDetail,
    (Role.VALIDATOR, Kind.ALARM): ev.AlarmDetail,
    (Role.SCORER, Kind.SCORE): ev.ScoreDetail,
    (Role.REFLECTOR, Kind.REFLECT): ev.ProposalDetail,
    (Role.REFLECTOR, Kind.IDLE): ev.ProposalDetail,
    (Role.REFLECTOR, Kind.EXPERIMENT): ev.ExperimentDetail,
    (Role.REFLECTOR, Kind.ERROR): ev.ErrorDetail,
    (Role.DECISION, Kind.DECIDE): ev.DecideDetail,
    (Role.DECISION, Kind.CHECKPOINT): ev.StepCheckpointDetail,
    (Role.DECISION, Kind.RESUME): ev.ResumeDetail,
    (Role.DECISION, Kind.STOP): ev.StopDetail,
    (Role.DECISION, Kind.CONFIRM): ev.WinnerDetail,  # the winner-plus-confirmation ending
    (Role.DECISION, Kind.ERROR_DECISION): se.ErrorClassDetail,  # a failed step's class, obeyed
    # -- an experiment around the engine (labkit.experiments.arms.run) ----------------------
    (Role.EXPERIMENT, Kind.DEFINE): xe.ArmDefineDetail,
    (Role.EXPERIMENT, Kind.STOP): ev.StopDetail,
    # -- the control plane: tool tasks, effects, test changes, retries ----------------------
    (Role.CONTROL, Kind.STOP): ev.StopDetail,
    (Role.CONTROL, Kind.CHECKPOINT): ev.RestorePointDetail,
    (Role.CONTROL, Kind.TEST_CHANGE): ev.TestChangeDetail,
    (Role.CONTROL, Kind.ATTEMPT): se.AttemptDetail,
    (Role.CONTROL, Kind.RETRY): se.AttemptDetail,
    (Role.TOOL, Kind.TOOL): ev.ToolDetail,
    (Role.TOOL, Kind.EFFECT): ev.EffectDetail,
    (Role.TOOL_REFLECTOR, Kind.REFLECT): ev.BoundReflectionDetail,
    (Role.HUMAN, Kind.ESCALATE): ev.EscalateDetail,
    (Role.MEMORY, Kind.REMEMBER): ev.RememberDetail,
    # -- the worked examples' own control planes (labkit.record.experiment_events) -----------
    (Role.PLANNER, Kind.PLAN): xe.PlanDetail,  # a long project (experiments.long_projects)
    (Role.QA, Kind.QA): xe.QaDetail,
    (Role.DECISION, Kind.CRITIQUE): xe.CritiqueDetail,  # a merge of parts (long_projects.merge)
    (Role.DECISION, Kind.SELECT): xe.SelectDetail,  # the selector cascade (judging.cascade)
    (Role.HUMAN, Kind.EXPOSE): xe.ExposeDetail,  # a final set authorised as development material
    (Role.CONTROL, Kind.BATCH): xe.BatchDetail,  # batches of units (arms.incidents)
    # -- the frontier search's own loop, until session 33 (its ledgers still read; nothing writes it now)
    (Role.SEARCH, Kind.DEFINE): se.SearchDefineDetail,
    (Role.SEARCH, Kind.EXPAND): se.ExpandDetail,
    (Role.SEARCH, Kind.BRANCH): se.BranchDetail,
    (Role.SEARCH, Kind.SEAL): se.SealDetail,
    (Role.SEARCH, Kind.ERROR_DECISION): se.ErrorDecisionDetail,
    (Role.SEARCH, Kind.QUARANTINE): se.QuarantineDetail,
    (Role.SEARCH, Kind.CONFIRM): se.ConfirmDetail,
    (Role.SEARCH, Kind.STOP): se.SearchStopDetail,
}
MODEL_CALLS: dict[Kind, type] = {Kind.GENERATE: me.ModelCallDetail, Kind.ERROR: me.ModelErrorDetail}
_ROLES = frozenset(str(r) for r in Role) - {str(Role.MODEL)}
_KINDS = frozenset(str(k) for k in Kind)


def shape(role: str, kind: str) -> type | None:
    """The detail shape declared for `kind` written by `role`; None when none is declared."""
    if role == Role.BUDGET:  # the paid action's kind: whatever label its payer gave it
        return ev.BudgetDetail
    if role not in _ROLES:  # a model-backed role's calls, recorded by the gateway
        return MODEL_CALLS.get(Kind(kind)) if kind in _KINDS else None
    if kind not in _KINDS:
        return None
    return VOCABULARY.get((Role(role), Kind(kind)))


def undeclared(role: str, kind: str, detail: Mapping[str, object] | None) -> list[str]:
    """The detail keys `role` may not write for `kind` (every key when the pair is undeclared)."""
    cls = shape(role, kind)
    if cls is None:
        return sorted(detail or {}) or [f"<{role}/{kind} is not declared>"]
    return sorted(set(detail or {}) - _fields(cls))


def check(role: str, kind: str, detail: Mapping[str, object] | None) -> None:
    """LedgerError naming role, kind and the offending fields, unless the event is declared."""
    declared = _declared(role, kind)  # on every append: one cached lookup, one subset test
    if declared is not None and (not detail or detail.keys() <= declared[1]):
        return
    if declared is None:
        raise LedgerError(
            f"the ledger's vocabulary declares no {str(kind)!r} events by role {str(role)!r} "
            "(see labkit.record.vocabulary); nothing was recorded"
        )
    extra = sorted(set(detail or {}) - declared[1])
    raise LedgerError(
        f"{str(kind)!r} events by role {str(role)!r} ({declared[0]}) declare no detail field(s) {extra} "
        "(see labkit.record.vocabulary); nothing was recorded"
    )


@functools.lru_cache(maxsize=1024)
def _declared(role: str, kind: str) -> tuple[str, frozenset[str]] | None:
    cls = shape(role, kind)
    return None if cls is None else (cls.__name__, _fields(cls))


def _fields(cls: type) -> frozenset[str]:
    return frozenset(k for base in cls.__mro__ for k in getattr(base, "__annotations__", {}))

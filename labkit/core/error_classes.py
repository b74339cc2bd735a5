"""Error classes decide permissions (seed 002 §4–§5).

Every failure a run meets is put in one of five classes, and the class — not the wording
of the error, not the candidate's opinion — decides what the controller may do next:

=================  =============================================  ==========================
class              grants                                         refuses
=================  =============================================  ==========================
INVALID_ARGUMENT   fix the arguments, within a configured limit   retry unchanged, new
                                                                  hypothesis on this evidence
TEST_FAILURE       new evidence (observe) or a new hypothesis     retry unchanged, fix args,
                                                                  relabel as infrastructure
POLICY_DENIED      a legal authorisation change, or stop          any retry or new attempt
INFRASTRUCTURE     the control plane retries, uniformly, billed   a new experimental unit,
                                                                  a new hypothesis
UNKNOWN_EFFECT     reconcile, then decide                         repeating the action (or a
                                                                  sibling branch of it)
=================  =============================================  ==========================

Retry counts are configuration (`RetryPolicy`), not constants. Who caused a failure is
part of its classification: a candidate's own memory blow-up, timeout or process damage
is a TEST_FAILURE caused by the candidate, and `Classified.relabel` refuses to turn it
into INFRASTRUCTURE. Classifying concrete validator, sandbox, model and tool errors lives
in `labkit.loop.control.classify` (it needs the layers above core).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from types import MappingProxyType

from labkit.core.errors import PermissionRefused, UnknownEffect

__all__ = [
    "PERMISSIONS",
    "Action",
    "Classified",
    "ErrorClass",
    "Permission",
    "PermissionRefused",
    "RetryPolicy",
    "UnknownEffect",
    "permits",
]


class ErrorClass(StrEnum):
    INVALID_ARGUMENT = "INVALID_ARGUMENT"
    TEST_FAILURE = "TEST_FAILURE"
    POLICY_DENIED = "POLICY_DENIED"
    INFRASTRUCTURE = "INFRASTRUCTURE"
    UNKNOWN_EFFECT = "UNKNOWN_EFFECT"


class Action(StrEnum):
    """What a controller may want to do after a failure."""

    FIX_ARGUMENTS = "fix arguments"  # same action, corrected arguments
    RETRY_UNCHANGED = "retry unchanged"  # same action, same arguments (control-plane retry)
    NEW_HYPOTHESIS = "new hypothesis or evidence"  # observe, or try a different explanation
    CHANGE_AUTHORISATION = "legal authorisation change"
    RECONCILE = "reconcile"  # find out what the action actually did
    REPEAT_ACTION = "repeat the action"  # run it (or a sibling branch of it) again
    NEW_UNIT = "count as a new experimental unit"
    RELABEL_INFRASTRUCTURE = "relabel as infrastructure"
    STOP = "stop"


@dataclass(frozen=True)
class Permission:
    error_class: ErrorClass
    grants: frozenset[Action]
    rule: str  # the sentence the seed gives for this class

    @property
    def refuses(self) -> frozenset[Action]:
        return frozenset(Action) - self.grants


def _p(cls: ErrorClass, rule: str, *grants: Action) -> Permission:
    return Permission(cls, frozenset((*grants, Action.STOP)), rule)


PERMISSIONS: Mapping[ErrorClass, Permission] = MappingProxyType(
    {
        ErrorClass.INVALID_ARGUMENT: _p(
            ErrorClass.INVALID_ARGUMENT, "fix the arguments within a limit", Action.FIX_ARGUMENTS
        ),
        ErrorClass.TEST_FAILURE: _p(
            ErrorClass.TEST_FAILURE, "needs new evidence or a new hypothesis", Action.NEW_HYPOTHESIS
        ),
        ErrorClass.POLICY_DENIED: _p(
            ErrorClass.POLICY_DENIED,
            "only a legal authorisation change, or stop",
            Action.CHANGE_AUTHORISATION,
        ),
        ErrorClass.INFRASTRUCTURE: _p(
            ErrorClass.INFRASTRUCTURE,
            "the control plane retries under one uniform, billed rule",
            Action.RETRY_UNCHANGED,
            Action.RECONCILE,
        ),
        ErrorClass.UNKNOWN_EFFECT: _p(
            ErrorClass.UNKNOWN_EFFECT,
            "pause actions that may duplicate until reconciled",
            Action.RECONCILE,
        ),
    }
)


def permits(error_class: ErrorClass, action: Action) -> bool:
    return action in PERMISSIONS[error_class].grants


@dataclass(frozen=True)
class Classified:
    """One failure, classified. `candidate_caused` failures can never become infrastructure."""

    error_class: ErrorClass
    source: str  # validator | sandbox | model | tool | budget | host
    reason: str
    candidate_caused: bool = False

    @property
    def permission(self) -> Permission:
        return PERMISSIONS[self.error_class]

    def require(self, action: Action) -> None:
        """Raise PermissionRefused unless this class grants `action`."""
        if not permits(self.error_class, action):
            granted = ", ".join(sorted(a.value for a in self.permission.grants))
            raise PermissionRefused(
                f"{self.error_class.value} ({self.reason}) does not permit {action.value!r}; it grants: {granted}"
            )

    def relabel(self, to: ErrorClass, *, by: str) -> Classified:
        """A new classification, made by `by` (an independent control plane), or refused.

        A failure the candidate caused (its own memory, time or process damage) is the
        candidate's evidence: it is never relabelled as infrastructure, by anyone.
        """
        if to is ErrorClass.INFRASTRUCTURE and self.candidate_caused:
            raise PermissionRefused(f"{by} may not relabel a candidate-caused failure as infrastructure: {self.reason}")
        if not by or by == "candidate":
            raise PermissionRefused(f"only the control plane relabels a failure, not {by!r}")
        return replace(self, error_class=to, reason=f"{self.reason} (relabelled by {by})")


@dataclass(frozen=True)
class RetryPolicy:
    """How many tries each class gets. Configuration, not a constant of nature."""

    infrastructure_retries: int = 2  # extra attempts after the first, same for every task
    argument_fixes: int = 1

    def __post_init__(self) -> None:
        for name in ("infrastructure_retries", "argument_fixes"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise ValueError(f"RetryPolicy.{name} must be an int >= 0, got {v!r}")

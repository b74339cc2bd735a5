"""What the engine does when a step fails: classify the failure, then obey its class.

A run given `Failures` (engine.run(..., failures=...)) classifies every exception its steps 3
to 5 raise (a model call, executing a child, a validation) with `Failures.classify` (e.g.
`labkit.loop.control.classify.classify`) and the class decides, by the permissions of
`labkit.core.error_classes`, never the wording:

- INFRASTRUCTURE is retried by the one uniform, billed rule (`retried`: every attempt pays,
  every attempt is an ATTEMPT/RETRY event of the same unit, the original failure is kept);
- a class that grants a new hypothesis or fixed arguments (TEST_FAILURE, INVALID_ARGUMENT)
  ends that child, or that expansion: the case goes on ("continue");
- a class that grants neither (POLICY_DENIED, INFRASTRUCTURE whose retries ran out) stops the
  case ("stop");
- UNKNOWN_EFFECT, or an integrity alarm, quarantines it: the case stops and its winner is not
  confirmed ("quarantine").

Each decision is one ERROR_DECISION event of role DECISION. Without `Failures` a model error is
this round's proposal failure and any other exception interrupts the run, as before.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypeVar

from labkit.core.error_classes import Action, Classified, ErrorClass, RetryPolicy, permits
from labkit.core.errors import IntegrityAlarm
from labkit.record.events import Kind, Role

if TYPE_CHECKING:
    from labkit.record.ledger import Ledger

__all__ = ["Classify", "Failures", "Obeyed", "RetryAttempt", "obey", "retried"]

T = TypeVar("T")
Classify = Callable[[BaseException, str], Classified]  # (exception, source) -> its class
Obey = Literal["continue", "stop", "quarantine"]


@dataclass(frozen=True)
class Failures:
    """How a run treats a failed step: `classify` it, retry INFRASTRUCTURE under `retry`."""

    classify: Classify
    retry: RetryPolicy = field(default_factory=RetryPolicy)


@dataclass(frozen=True)
class Obeyed:
    """A classified failure and what its class left the engine to do."""

    error: Classified
    action: Obey

    @property
    def words(self) -> str:
        return {"continue": "end this branch; other hypotheses continue", "stop": "stop", "quarantine": "quarantine"}[
            self.action
        ]

    @property
    def rule(self) -> str:
        """The stop rule a stopped case records."""
        if self.action == "quarantine":
            return "quarantine"
        return "policy-denied" if self.error.error_class is ErrorClass.POLICY_DENIED else "error-class"


def obey(failures: Failures, exc: BaseException, source: str) -> Obeyed:
    """The class of `exc` and what it permits next."""
    cls = failures.classify(exc, source)
    if cls.error_class is ErrorClass.UNKNOWN_EFFECT or isinstance(exc, IntegrityAlarm):
        return Obeyed(cls, "quarantine")
    if permits(cls.error_class, Action.NEW_HYPOTHESIS) or permits(cls.error_class, Action.FIX_ARGUMENTS):
        return Obeyed(cls, "continue")
    return Obeyed(cls, "stop")


@dataclass(frozen=True)
class RetryAttempt:
    """One try of a retried action. All attempts of one action share its `unit`."""

    unit: str
    attempt: int  # 0 is the original try
    error: Classified | None  # None: this attempt succeeded


def retried(
    attempt: Callable[[], T],
    kind: str,
    *,
    classify: Classify,
    policy: RetryPolicy,
    unit: str,
    source: str = "tool",
    ledger: Ledger | None = None,
    run_id: str = "",
    round: int = 0,
) -> tuple[T, tuple[RetryAttempt, ...]]:
    """Run `attempt` (which pays for itself); retry it only on INFRASTRUCTURE, at most
    `policy.infrastructure_retries` times. Every attempt is paid (a retry refunds nothing) and
    recorded as an ATTEMPT (the first) or RETRY event of `unit`; any other class is raised at once,
    and when the retries run out the last exception is raised."""
    attempts: list[RetryAttempt] = []
    for i in range(policy.infrastructure_retries + 1):
        try:
            out = attempt()
        except Exception as exc:
            cls = classify(exc, source)
            attempts.append(RetryAttempt(unit, i, cls))
            _log(ledger, run_id, round, kind, attempts[-1], attempts[0])
            if cls.error_class is not ErrorClass.INFRASTRUCTURE or i == policy.infrastructure_retries:
                raise
            continue
        attempts.append(RetryAttempt(unit, i, None))
        _log(ledger, run_id, round, kind, attempts[-1], attempts[0])
        return out, tuple(attempts)
    raise AssertionError("unreachable")  # pragma: no cover


def _log(ledger: Ledger | None, run_id: str, round: int, kind: str, a: RetryAttempt, first: RetryAttempt) -> None:
    if ledger is None:
        return
    event = Kind.RETRY if a.attempt else Kind.ATTEMPT
    detail = {
        "unit": a.unit, "attempt": a.attempt, "action": kind,
        "error_class": a.error.error_class.value if a.error else "",
        "reason": a.error.reason if a.error else "",
        "original_failure": first.error.reason if first.error else "",
    }  # fmt: skip
    ledger.record(run_id, round, Role.CONTROL, event, detail=detail)

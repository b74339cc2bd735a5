"""Classify validator, sandbox, model and tool failures into the five error classes.

`classify(x, source=...)` takes an exception, a Verdict or a SandboxRun and says which
`ErrorClass` it is, who caused it, and why; success (a resolved verdict, a clean run)
is None. The rules are conservative:

- anything the candidate's own run did — a timeout, a kill by signal (memory), a
  MemoryError/RecursionError/TimeoutError raised from candidate code — is a
  TEST_FAILURE caused by the candidate, whatever its message or attributes claim;
- INFRASTRUCTURE is only what the control plane's own machinery reports (a model
  provider timing out or unreachable, the ledger failing, a host-side OSError);
- an exception nobody knows the effect of is UNKNOWN_EFFECT: pause, reconcile first.

`retry_infrastructure` is the one uniform, billed retry rule for INFRASTRUCTURE: every
attempt goes through ``Budget.paid``, every attempt is recorded with the same unit id
(a retry is not a new experimental unit), and the original failure is kept. `retried`
is the same rule around an action that pays for itself (an engine step given a Payment).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal, TypeVar

from labkit.core.error_classes import Classified, ErrorClass, RetryPolicy, UnknownEffect
from labkit.core.errors import (
    BudgetExhausted,
    IntegrityAlarm,
    LedgerError,
    MissingKey,
    ModelTimeout,
    ModelUnavailable,
    PatchError,
    ReplyFormatError,
    UnknownModel,
    ValidatorMismatch,
)
from labkit.core.types import Verdict
from labkit.grading.sandbox import SandboxError, SandboxRun
from labkit.loop.engine.failure_policy import RetryAttempt
from labkit.loop.engine.failure_policy import retried as engine_retried

if TYPE_CHECKING:
    from labkit.record.budget import Budget, Operation
    from labkit.record.ledger import Ledger

__all__ = ["RetryAttempt", "Source", "classify", "classify_exception", "retried", "retry_infrastructure"]

T = TypeVar("T")
Source = Literal["validator", "sandbox", "candidate", "model", "tool", "budget", "host"]
_CANDIDATE_SIDE = ("validator", "sandbox", "candidate")

E = ErrorClass


def classify(x: BaseException | Verdict | SandboxRun, source: Source = "tool") -> Classified | None:
    """The error class of `x` (None for success). `source` says where it was raised."""
    if isinstance(x, Verdict):
        return _verdict(x)
    if isinstance(x, SandboxRun):
        return _sandbox_run(x)
    if isinstance(x, BaseException):
        return classify_exception(x, source)
    raise TypeError(f"classify takes an exception, Verdict or SandboxRun, got {type(x).__name__}")


def _verdict(v: Verdict) -> Classified | None:
    ev = v.evidence
    if v.quarantined:
        return Classified(E.POLICY_DENIED, "validator", "integrity alarm: " + "; ".join(ev.alarms), True)
    if ev.timed_out:
        return Classified(E.TEST_FAILURE, "validator", "the candidate's run hit the wall limit", True)
    if ev.exit_code is None and ev.results == ():
        return Classified(E.TEST_FAILURE, "validator", "the candidate's run was killed", True)
    if v.resolved:
        return None
    failing = [*v.fail_to_fail, *v.pass_to_fail]
    return Classified(E.TEST_FAILURE, "validator", f"required checks fail: {', '.join(failing)}", True)


def _sandbox_run(r: SandboxRun) -> Classified | None:
    if r.timed_out:
        return Classified(E.TEST_FAILURE, "sandbox", "the candidate's run hit the wall limit", True)
    if r.exit_code is None:
        return Classified(E.TEST_FAILURE, "sandbox", "the candidate's run was killed by a signal (memory?)", True)
    if not r.report_found:
        return Classified(E.TEST_FAILURE, "sandbox", f"no report from the candidate's run (exit {r.exit_code})", True)
    bad = [t.nodeid for t in r.results if t.outcome in ("failed", "error")]
    if bad:
        return Classified(E.TEST_FAILURE, "sandbox", f"tests fail: {', '.join(bad)}", True)
    return None


def classify_exception(exc: BaseException, source: str) -> Classified:
    """The class of an exception raised at `source` (an engine run's `Failures.classify`)."""
    what = f"{type(exc).__name__}: {exc}"
    ours = source in _CANDIDATE_SIDE
    if isinstance(exc, UnknownEffect):
        return Classified(E.UNKNOWN_EFFECT, source, what, ours)
    if isinstance(exc, MemoryError | RecursionError) or (ours and isinstance(exc, TimeoutError)):
        # The candidate's own resources: its evidence, never the platform's fault.
        return Classified(E.TEST_FAILURE, source, what, ours or isinstance(exc, MemoryError))
    if isinstance(exc, IntegrityAlarm | SandboxError | MissingKey | BudgetExhausted | PermissionError):
        return Classified(E.POLICY_DENIED, source, what, ours)
    if isinstance(
        exc,
        UnknownModel | ReplyFormatError | PatchError | ValidatorMismatch | ValueError | TypeError | KeyError,
    ):
        return Classified(E.INVALID_ARGUMENT, source, what, ours)
    if ours:  # anything else raised from the candidate's side is the candidate's failure
        return Classified(E.TEST_FAILURE, source, what, True)
    if isinstance(exc, ModelTimeout | ModelUnavailable | LedgerError | TimeoutError | ConnectionError):
        return Classified(E.INFRASTRUCTURE, source, what)
    return Classified(E.UNKNOWN_EFFECT, source, f"effect unknown after {what}")


def retry_infrastructure(
    budget: Budget,
    kind: str,
    op: Operation[T],
    *,
    policy: RetryPolicy,
    unit: str,
    source: Source = "tool",
    ledger: Ledger | None = None,
    run_id: str = "",
    round: int = 0,
) -> tuple[T, tuple[RetryAttempt, ...]]:
    """Run `op` through ``budget.paid``; retry it only on INFRASTRUCTURE, at most `policy` times.

    Every attempt is paid for (a retry refunds nothing). Any other class is raised at
    once. When retries run out the last exception is raised. Each attempt is a RETRY
    event of `unit` in the ledger, so the accounting sees one unit with several attempts.
    """
    return retried(
        lambda: budget.paid(kind, op, round=round),
        kind,
        policy=policy,
        unit=unit,
        source=source,
        ledger=ledger,
        run_id=run_id,
        round=round,
    )


def retried(
    attempt: Callable[[], T],
    kind: str,
    *,
    policy: RetryPolicy,
    unit: str,
    source: Source = "tool",
    ledger: Ledger | None = None,
    run_id: str = "",
    round: int = 0,
) -> tuple[T, tuple[RetryAttempt, ...]]:
    """The same rule as `retry_infrastructure` for an `attempt` that pays for itself (each
    call must charge the budget: an engine step given a Payment). The rule is the engine's
    (`labkit.loop.engine.failure_policy.retried`), with this module's classification."""
    return engine_retried(
        attempt,
        kind,
        classify=classify_exception,
        policy=policy,
        unit=unit,
        source=source,
        ledger=ledger,
        run_id=run_id,
        round=round,
    )

"""Frontier search under a budget (seed 002 §3) as a configuration of `engine.run`.

The search has no loop of its own. It is the engine with a frontier:

    engine.run([task], strategy, checker,
        expand="breadth", rounds=max_expansions,           one expansion per round
        limits=FrontierLimits(max_depth, max_children),     the engine keeps the first children
        keep="severity", stop_at_green=False,               ΔF with severity decides keep
        case_rules=(Stalled(max_stalled),),                 no new state kept: stop
        prices=Prices(generate, execute, start=False),      the case's declared costs; the
        validation_cost=verify,                             start's verdict is the task's input
        confirm=Confirmation(rule, confirm),                the preregistered winner among green
                                                            states, confirmed from the reserve
        failures=Failures(classify_exception, retry),       error classes obeyed (retry, end the
        on_alarm="stop", build=build)                       branch, stop, quarantine)

`run_search` runs it and reads the search back from the engine's own events
(labkit.loop.search.readback): branches, seals, decisions, confirmation and the task's status
("success" needs a sealed winner AND a passed confirmation on the sealed final set).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from labkit.core.error_classes import RetryPolicy
from labkit.core.errors import SearchError
from labkit.core.types import Candidate
from labkit.loop.control.classify import classify_exception
from labkit.loop.engine import engine
from labkit.loop.engine.expand import Confirmation, FrontierLimits
from labkit.loop.engine.failure_policy import Failures
from labkit.loop.engine.recorder import Payment, Prices
from labkit.loop.engine.stopping import Stalled
from labkit.loop.engine.strategy import Strategy
from labkit.loop.engine.trace import EngineRun, Task
from labkit.loop.search.frontier import (
    Costs,
    SearchLimits,
    SearchResult,
    WinnerRule,
    smallest_change,
)
from labkit.loop.search.readback import Readback, read_search
from labkit.record.events import Kind
from labkit.record.ledger import Ledger

if TYPE_CHECKING:
    from labkit.grading.verdicts import Checker
    from labkit.record.budget import Budget

__all__ = ["SearchRun", "run_search"]

_LIMITS = SearchLimits()
_RETRY = RetryPolicy()


@dataclass(frozen=True)
class SearchRun:
    """A finished search: the engine's run and the search read back from its ledger."""

    run: EngineRun
    readback: Readback

    @property
    def result(self) -> SearchResult:
        return self.readback.result


def run_search(
    task: Task,
    strategy: Strategy,
    checker: Checker,
    budget: Budget,
    costs: Costs,
    *,
    limits: SearchLimits = _LIMITS,
    rule: WinnerRule = smallest_change,
    ledger: Ledger | None = None,
    run_id: str = "search",
    retry: RetryPolicy = _RETRY,
    build: Callable[[Candidate], object] | None = None,
    environment: str = "",
) -> SearchRun:
    """Search from `task.start` (its dev verdict is the task's input, not billed) and confirm
    the preregistered `rule`'s winner on `task.hidden`, the sealed final set. `budget.confirmation`
    should hold `costs.confirm`: without it, or when the confirmation fails, the task ends
    "incomplete" even with sealed candidates. `environment` names where states live (state keys)."""
    if not isinstance(rule, WinnerRule):
        raise SearchError(f"rule must be a WinnerRule registered up front, got {type(rule).__name__}")
    if task.checks is None or task.hidden is None:
        raise SearchError("a search task needs its checks (versions, severities) and its sealed final set (hidden)")
    ledger = ledger if ledger is not None else Ledger()
    prices = Prices(
        Payment.fixed(Kind.GENERATE, costs.generate), Payment.fixed(Kind.EXECUTE, costs.execute), start=False
    )
    run = engine.run(
        [task],
        strategy,
        checker,
        rounds=limits.max_expansions,
        keep="severity",
        stop_at_green=False,
        case_rules=(Stalled(limits.max_stalled),),
        ledger=ledger,
        budget=budget,
        run_id=run_id,
        validation_cost=costs.verify,
        expand="breadth",
        limits=FrontierLimits(limits.max_depth, limits.max_children),
        confirm=Confirmation(rule, costs.confirm),
        prices=prices,
        failures=Failures(classify_exception, retry),
        on_alarm="stop",
        build=build,
    )
    return SearchRun(run, read_search(ledger, run_id, task.checks, environment))

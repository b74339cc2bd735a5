"""Running the api_change search in tests: a `search` that runs it on the engine and returns
(result, ledger, budget), its steps read back, and a scripted generator (simulated)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from labkit.core.types import Usage, Verdict
from labkit.grading.acceptance import AcceptanceSuite
from labkit.grading.sealed import SearchCase
from labkit.grading.validator import Validator
from labkit.grading.verdicts import Checker
from labkit.loop.engine.strategy import Child, Proposal, Situation
from labkit.loop.search.readback import ReadStep, read_search
from labkit.loop.search.search_case import (
    RouteStrategy,
    byte_compile,
    costs_of,
    environment_of,
    task_of,
)
from labkit.loop.search.search_run import run_search
from labkit.record.budget import Budget, limits
from labkit.record.ledger import Ledger

A, B, C = "A restore the old API", "B add a compatibility layer", "C fix the callers"


def search(
    case: SearchCase,
    validator: Validator,
    baseline: Verdict,
    *,
    total: float = 15,
    reserve: float = 2,
    strategy: Any = None,
    hidden: AcceptanceSuite | None = None,
    **kw: Any,
) -> tuple[Any, Ledger, Budget]:
    led = Ledger()
    budget = Budget(limits(cost_units=total), confirmation=Usage(cost_units=reserve), ledger=led, run_id="task-1")
    task = task_of(case) if hidden is None else replace(task_of(case), hidden=hidden)
    checker = Checker(validator)
    kw.setdefault("build", byte_compile)
    result = run_search(
        task,
        strategy or RouteStrategy(case),
        checker,
        budget,
        costs_of(case),
        ledger=led,
        run_id="task-1",
        environment=environment_of(case, checker),
        **kw,
    ).result
    assert case.checks.read(baseline.evidence).failures == result.baseline_run.failures  # the engine's own start
    return result, led, budget


def steps(led: Ledger, case: SearchCase) -> list[ReadStep]:
    """The search's steps, read back from the engine's events."""
    return read_search(led, "task-1", case.checks).steps


@dataclass
class Script:
    """A scripted generator (simulated): a fixed list of children at the root, then nothing."""

    children: tuple[Child, ...]
    name: str = "scripted"
    simulated: bool = True
    calls: int = 0

    def propose(self, situation: Situation) -> Proposal:
        self.calls += 1
        return Proposal(children=self.children if situation.state == "start" else ())

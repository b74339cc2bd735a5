"""Running frontier search on case material: the task, a route strategy, the accounts.

- `task_of` is a search case as the engine sees it: the start, the dev checks (visible suite),
  the sealed final set (hidden suite), the versioned checks with severities and the patch cap.
- `RouteStrategy` is a scripted generator (simulated; label it so): one shared generation
  proposes every route of the case not yet on the state's route, in the case's stated
  `route_order` (by label unless case.json says "size" or "listed"), so reordering
  case.json's patches does not change an outcome by accident.
- `search` runs it on a case at a total budget with a confirmation reserve: `run_search`
  (labkit.loop.search.search_run), a configuration of `engine.run`, with `byte_compile` as
  the build of every executed route.
- `spend` reads a run's accounts back from its ledger (budget events): search spend,
  confirmation spend, total, and what is left — the trace's numbers come from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from labkit.core.error_classes import RetryPolicy
from labkit.core.errors import SearchError
from labkit.core.patch import size
from labkit.core.types import Candidate, Patch, Usage, Verdict
from labkit.grading.sealed import SearchCase
from labkit.loop.engine.strategy import Child, Proposal, Situation, Strategy
from labkit.loop.engine.trace import Task
from labkit.loop.search.frontier import (
    Costs,
    SearchLimits,
    SearchResult,
    WinnerRule,
    smallest_change,
)
from labkit.loop.search.search_run import SearchRun, run_search
from labkit.record.budget import Budget, limits
from labkit.record.events import BudgetStatus, Role

if TYPE_CHECKING:
    from labkit.grading.verdicts import Checker
    from labkit.record.ledger import Ledger

__all__ = [
    "RouteStrategy", "Spend", "byte_compile", "costs_of", "environment_of", "routes", "search", "search_run",
    "spend", "task_of",
]  # fmt: skip


def task_of(case: SearchCase) -> Task:
    """The case as the engine sees it (its hidden suite is the sealed final check set)."""
    return Task(
        id=case.case.name,
        start=case.case.start,
        suite=case.suite,
        hidden=case.final,
        patch_cap=case.case.patch_cap,
        checks=case.checks,
    )


def environment_of(case: SearchCase, checker: Checker) -> str:
    """Where the case's states live: its declared environment and the validator (state keys)."""
    return f"{case.case.environment} · validator {checker.id}"


def byte_compile(candidate: Candidate) -> None:
    """Compile every Python file of `candidate` (a SyntaxError is the candidate's failure)."""
    for path, text in candidate.files.items():
        if path.endswith(".py"):
            compile(text, path, "exec", dont_inherit=True)


def costs_of(case: SearchCase) -> Costs:
    return Costs.of(case.costs)


@dataclass
class RouteStrategy:
    """Scripted: proposes the case's routes (each a real diff) not yet on this state's path."""

    case: SearchCase
    name: str = "scripted routes (case patches)"
    simulated: bool = True

    def propose(self, situation: Situation) -> Proposal:
        path = set(situation.path)  # the route's hypotheses from the start
        children = tuple(
            Child(patch=p, name=p.description, source="route") for p in routes(self.case) if p.description not in path
        )
        return Proposal(children=children, note=f"{len(children)} routes from {situation.state}")


def routes(case: SearchCase) -> list[Patch]:
    """The case's routes in its stated order: "label" (alphabetical), "size" (fewest changed
    lines first, then label) or "listed" (case.json's order, when the author chose it)."""
    listed = list(case.case.patches.values())
    if case.route_order == "listed":
        return listed
    if case.route_order == "size":
        return sorted(listed, key=lambda p: (size(p).lines, size(p).hunks, p.description))
    return sorted(listed, key=lambda p: p.description)


def search_run(
    case: SearchCase,
    checker: Checker,
    baseline: Verdict | None = None,
    *,
    total: float,
    reserve: float,
    ledger: Ledger,
    run_id: str,
    strategy: Strategy | None = None,
    limits_: SearchLimits | None = None,
    rule: WinnerRule = smallest_change,
    retry: RetryPolicy | None = None,
) -> SearchRun:
    """The real search on `case` at a `total` budget of cost units, `reserve` of it held for
    the confirmation, recorded in `ledger` under `run_id` (scripted routes by default).

    The engine validates the start itself (the task's input, not billed); a `baseline` the
    caller already has must fail the same dev checks, or the search is refused."""
    budget = Budget(
        limits(cost_units=total), confirmation=Usage(cost_units=min(reserve, total)), ledger=ledger, run_id=run_id
    )
    out = run_search(
        task_of(case),
        strategy or RouteStrategy(case),
        checker,
        budget,
        costs_of(case),
        limits=limits_ or SearchLimits(),
        rule=rule,
        ledger=ledger,
        run_id=run_id,
        retry=retry or RetryPolicy(),
        build=byte_compile,
        environment=environment_of(case, checker),
    )
    if baseline is not None and case.checks.read(baseline.evidence).failures != out.result.baseline_run.failures:
        raise SearchError("the given baseline and the run's own start verdict fail different dev checks")
    return out


def search(
    case: SearchCase,
    checker: Checker,
    baseline: Verdict | None = None,
    *,
    total: float,
    reserve: float,
    ledger: Ledger,
    run_id: str,
    strategy: Strategy | None = None,
    limits_: SearchLimits | None = None,
    rule: WinnerRule = smallest_change,
    retry: RetryPolicy | None = None,
) -> SearchResult:
    """`search_run(...).result`: how the search on `case` ended."""
    return search_run(
        case,
        checker,
        baseline,
        total=total,
        reserve=reserve,
        ledger=ledger,
        run_id=run_id,
        strategy=strategy,
        limits_=limits_,
        rule=rule,
        retry=retry,
    ).result


@dataclass(frozen=True)
class Spend:
    """A run's accounts in cost units, read from its ledger's budget events."""

    search: float
    confirmation: float
    limit: float
    by_kind: dict[str, float]

    @property
    def total(self) -> float:
        return self.search + self.confirmation

    @property
    def left(self) -> float:
        return self.limit - self.total


_SETTLED = (BudgetStatus.SETTLED, BudgetStatus.UNKNOWN, BudgetStatus.OVERRUN)


def spend(ledger: Ledger, run_id: str, limit: float) -> Spend:
    search = confirmation = 0.0
    by_kind: dict[str, float] = {}
    for e in ledger.events(run_id):
        if e.role != Role.BUDGET or e.detail.get("status") not in _SETTLED:
            continue
        if e.detail.get("from_reserve"):
            confirmation += e.cost_units
        else:
            search += e.cost_units
        by_kind[e.kind] = by_kind.get(e.kind, 0.0) + e.cost_units
    return Spend(search, confirmation, limit, by_kind)

"""Running frontier search on case material: the real host, a route strategy, the accounts.

- `engine_host` / `case_host` run each child through the engine's own per-candidate steps
  (labkit.loop.engine.steps: prepare = step 4, Recorder.check/verified = steps 2 and 5, with the
  engine's ledger events and verdict cache), then the case's sealed final check set
  (Recorder.confirm: pass/fail only).
- `RouteStrategy` is a scripted generator (simulated; label it so): one shared generation
  proposes every route of the case not yet on the state's path, in the case's stated
  `route_order` (by label unless case.json says "size" or "listed"), so reordering
  case.json's patches does not change an outcome by accident.
- `search` runs it all on a case at a total budget with a confirmation reserve.
- `engine_search` is the same search as a configuration of `engine.run`: a breadth frontier,
  the case's price list, keep with severity, `Stalled` as the stalled guard and the winner-plus-
  confirmation ending. On api_change it agrees with `search` at every total from 4 to 40
  (tests/test_search_on_engine.py); the notebook and `labkit search` still read `search`'s events.
- `spend` reads a run's accounts back from its ledger (budget events): search spend,
  confirmation spend, total, and what is left — the trace's numbers come from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from labkit.core.patch import size
from labkit.core.types import Candidate, Patch, Usage, Verdict
from labkit.grading.sealed import SearchCase
from labkit.grading.verdicts import Checker
from labkit.loop.engine import engine
from labkit.loop.engine.expand import Confirmation, FrontierLimits
from labkit.loop.engine.steps import Payment, Prices, Recorder
from labkit.loop.engine.stopping import Stalled
from labkit.loop.engine.strategy import Child, Proposal, Situation, Strategy
from labkit.loop.engine.trace import EngineRun, Task
from labkit.loop.search.frontier import (
    Costs,
    SearchLimits,
    SearchResult,
    WinnerRule,
    smallest_change,
)
from labkit.loop.search.host import Host, run_search
from labkit.record.budget import Budget, limits
from labkit.record.events import BudgetStatus, Kind, Role

if TYPE_CHECKING:
    from labkit.record.ledger import Ledger

__all__ = [
    "RouteStrategy", "Spend", "byte_compile", "case_host", "costs_of", "engine_host", "engine_search", "routes",
    "search", "spend",
]  # fmt: skip


def engine_host(case: SearchCase, rec: Recorder, task: Task) -> Host:
    """A Host whose per-candidate steps are the engine's, so nothing here re-implements them.

    - execute (left None: the search runs the engine's step 4, `steps.prepare`, paid as
      EXECUTE): protected paths refused as an integrity alarm, the patch applied to a fresh
      copy of the parent, a GENERATE event recorded, then `build`: every Python file of the
      result byte-compiled (a SyntaxError is the candidate's failure);
    - verify = the engine's steps 2/5 (`Recorder.check` through the one verdict cache, and
      `Recorder.verified`, which records the VERIFY and ALARM events);
    - confirm (left None: the search calls `Recorder.confirm`): the sealed final check set,
      which is the task's hidden suite — only pass/fail comes back.

    `rec` must have no budget: the search pays each action at the declared costs through a
    Recorder of its own (a cached verdict is still paid for: the price list says so).
    """
    if rec.budget is not None:
        raise ValueError("the search pays each action itself; give the case's Recorder budget=None")
    if task.hidden is None or task.hidden.digest != case.final.digest:
        raise ValueError("the task's hidden suite must be the case's sealed final check set")

    def verify(candidate: Candidate, rnd: int) -> Verdict:
        checked = rec.check(task, rnd, candidate)
        return rec.verified(task, rnd, candidate, checked, None, "search: development checks")

    return Host(None, verify, None, case.checks, f"{case.case.environment} · validator {rec.checker.id}",
                rec.checker.id, case.suite.digest, task=task, recorder=rec, build=byte_compile)  # fmt: skip


def byte_compile(candidate: Candidate) -> None:
    """Compile every Python file of `candidate` (a SyntaxError is the candidate's failure)."""
    for path, text in candidate.files.items():
        if path.endswith(".py"):
            compile(text, path, "exec", dont_inherit=True)


def case_host(case: SearchCase, checker: Checker, ledger: Ledger, run_id: str) -> Host:
    """`engine_host` for a search case, recording into `ledger` under `run_id`."""
    task = Task(case.case.name, case.case.start, case.suite, case.final,
                patch_cap=case.case.patch_cap)  # fmt: skip
    return engine_host(case, Recorder(run_id, ledger, checker, None, 0.0, True), task)


def costs_of(case: SearchCase) -> Costs:
    return Costs.of(case.costs)


@dataclass
class RouteStrategy:
    """Scripted: proposes the case's routes (each a real diff) not yet on this state's path."""

    case: SearchCase
    name: str = "scripted routes (case patches)"
    simulated: bool = True

    def propose(self, situation: Situation) -> Proposal:
        path = set(situation.state.split(" > ")) if situation.state != "start" else set()
        children = tuple(
            Child(patch=p, name=p.description, source="route")
            for p in routes(self.case)
            if p.description not in path
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


def search(
    case: SearchCase, checker: Checker, baseline: Verdict, *, total: float, reserve: float,
    ledger: Ledger, run_id: str, strategy: Strategy | None = None,
) -> SearchResult:  # fmt: skip
    """The real search on `case` at a `total` budget of cost units, `reserve` of it held for
    the confirmation, recorded in `ledger` under `run_id` (scripted routes by default)."""
    budget = Budget(limits(cost_units=total), confirmation=Usage(cost_units=min(reserve, total)),
                    ledger=ledger, run_id=run_id)  # fmt: skip
    return run_search(case.case.start, baseline, strategy or RouteStrategy(case), case_host(case, checker, ledger, run_id),
                      budget, costs_of(case), ledger=ledger, run_id=run_id, case=case.case.name)  # fmt: skip


def engine_search(
    case: SearchCase, checker: Checker, *, total: float, reserve: float, ledger: Ledger, run_id: str,
    strategy: Strategy | None = None, limits_: SearchLimits | None = None, rule: WinnerRule = smallest_change,
) -> EngineRun:  # fmt: skip
    """`search` as a configuration of the engine: one expansion per round (so `rounds` is
    max_expansions), a breadth frontier bounded by max_depth and max_children, the case's
    declared prices (the start's dev verdict is the input, not billed), keep with severity,
    `Stalled(max_stalled)`, and the preregistered winner confirmed from the reserve."""
    c, limits_ = costs_of(case), limits_ or SearchLimits()
    task = Task(case.case.name, case.case.start, case.suite, case.final, patch_cap=case.case.patch_cap, checks=case.checks)
    budget = Budget(limits(cost_units=total), confirmation=Usage(cost_units=min(reserve, total)),
                    ledger=ledger, run_id=run_id)  # fmt: skip
    prices = Prices(Payment.fixed(Kind.GENERATE, c.generate), Payment.fixed(Kind.EXECUTE, c.execute), start=False)
    return engine.run(
        [task], strategy or RouteStrategy(case), checker, rounds=limits_.max_expansions, keep="severity",
        stop_at_green=False, case_rules=(Stalled(limits_.max_stalled),), ledger=ledger, budget=budget, run_id=run_id,
        validation_cost=c.verify, expand="breadth", limits=FrontierLimits(limits_.max_depth, limits_.max_children),
        confirm=Confirmation(rule, c.confirm), prices=prices,
    )  # fmt: skip


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

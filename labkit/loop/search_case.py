"""Running frontier search on case material: the real host, a route strategy, the accounts.

- `case_host` executes a child for real (apply its diff to a fresh copy of the parent,
  then byte-compile every Python file of the result), verifies with the validator on the
  dev checks, and confirms with the case's sealed final check set.
- `RouteStrategy` is a scripted generator (simulated; label it so): one shared generation
  proposes every route of the case not yet on the state's path, in case order.
- `spend` reads a run's accounts back from its ledger (budget events): search spend,
  confirmation spend, total, and what is left — the trace's numbers come from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from labkit.core import patch as patches
from labkit.core.types import Candidate
from labkit.grading.sealed import SearchCase
from labkit.grading.validator import Validator
from labkit.loop.frontier import Costs
from labkit.loop.search import Host
from labkit.loop.strategy import Child, Proposal, Situation

if TYPE_CHECKING:
    from labkit.record.ledger import Ledger

__all__ = ["RouteStrategy", "Spend", "case_host", "costs_of", "execute_child", "spend"]


def execute_child(parent: Candidate, child: Child) -> Candidate:
    """Run `child` in a fresh branch: apply it to a copy of `parent` and compile the result.

    A patch that does not apply raises PatchError; a file that does not compile raises
    SyntaxError — both are the candidate's own failures.
    """
    if child.target is not None:
        candidate = Candidate(child.target.files, label=child.name, parent=parent.digest)
    else:
        assert child.patch is not None
        candidate = patches.apply(parent, child.patch, label=child.name)
    for path, text in candidate.files.items():
        if path.endswith(".py"):
            compile(text, path, "exec", dont_inherit=True)
    return candidate


def case_host(case: SearchCase, validator: Validator) -> Host:
    sealed = case.sealed(validator)
    return Host(
        execute=execute_child,
        verify=lambda c: validator.run(c, case.suite),
        confirm=sealed.confirm,
        checks=case.checks,
        environment=f"{case.case.environment} · validator {validator.id}",
        validator=validator.id,
        suite=case.suite.digest,
    )


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
            for p in self.case.case.patches.values()
            if p.description not in path
        )
        return Proposal(children=children, note=f"{len(children)} routes from {situation.state}")


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


def spend(ledger: Ledger, run_id: str, limit: float) -> Spend:
    search = confirmation = 0.0
    by_kind: dict[str, float] = {}
    for e in ledger.events(run_id):
        if e.role != "budget" or e.detail.get("status") not in ("settled", "unknown", "overrun"):
            continue
        if e.detail.get("from_reserve"):
            confirmation += e.cost_units
        else:
            search += e.cost_units
        by_kind[e.kind] = by_kind.get(e.kind, 0.0) + e.cost_units
    return Spend(search, confirmation, limit, by_kind)

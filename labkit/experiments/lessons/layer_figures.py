"""Layer metrics (seed 002 §7) from the ledgers of real runs, one shared ledger.

The units, assigned before anything runs:

- the frontier search on `api_change` at three total budgets (10, 14, 22 cost units; real dev
  checks, sealed confirmation, scripted routes) — every branch of a search is inside its unit;
- one more search task whose environment check fails before it starts (the task asks for
  userlib 2.0, the host offers 1.9): recorded as `invalid_environment`, kept in the denominator;
- the deploy task of `bound_reflection` three ways: unbound, unbound with a no-progress stop
  (3 actions without new evidence), observation-bound (escalates: a human takeover);
- the notice of `effects`, gated and naive.
"""

from __future__ import annotations

from dataclasses import dataclass

from labkit.experiments.lessons import bound_reflection
from labkit.experiments.lessons import irreversible as effects
from labkit.grading.sealed import load_search_case
from labkit.grading.verdicts import Checker
from labkit.loop.control.bound import run_tool_task
from labkit.loop.control.layer_metrics import LayerMetrics, layer_metrics
from labkit.loop.engine.stopping import NoNewEvidence
from labkit.loop.search.search_case import search
from labkit.record.budget import Budget, limits
from labkit.record.events import Kind, Role
from labkit.record.ledger import Ledger

__all__ = ["ASSIGNED", "Portfolio", "portfolio"]

TOTALS = (10.0, 14.0, 22.0)
SEARCH_UNITS = tuple(f"search-{t:g}" for t in TOTALS)
INVALID = "search-wrong-env"
ASSIGNED = (*SEARCH_UNITS, INVALID, "deploy-unbound", "deploy-unbound-capped", "deploy-bound",
            "effects-gated", "effects-naive")  # fmt: skip


@dataclass(frozen=True)
class Portfolio:
    metrics: LayerMetrics
    ledger: Ledger


def _searches(led: Ledger, checker: Checker) -> None:
    case = load_search_case("api_change")
    baseline = checker.check(case.case.start, case.suite).verdict
    for total, unit in zip(TOTALS, SEARCH_UNITS, strict=True):
        search(case, checker, baseline, total=total, reserve=2, ledger=led, run_id=unit)  # the run id is the unit
    wanted, offered = case.case.environment, case.case.environment.replace("2.0", "1.9")
    if wanted == offered:
        raise AssertionError(f"the case's environment {wanted!r} does not name userlib 2.0")
    led.record(INVALID, 0, Role.CONTROL, Kind.STOP, detail={
        "unit": INVALID, "status": "invalid_environment",
        "reason": f"environment check: task needs {wanted!r}, host offers {offered!r}"})  # fmt: skip


def _deploys(led: Ledger) -> None:
    br = bound_reflection
    bound_reflection.compare(led)  # deploy-unbound, deploy-bound
    budget = Budget(limits(cost_units=br.BUDGET), ledger=led, run_id="deploy-unbound-capped")
    run_tool_task(br.SimulatedShell(), br.artifact_of, br.Unbound(), br.FIRST, budget=budget, ledger=led,
                  run_id="deploy-unbound-capped", unit="deploy-unbound-capped", rules=(NoNewEvidence(3),))  # fmt: skip


def portfolio(checker: Checker | None = None) -> Portfolio:
    led = Ledger()
    _searches(led, checker or Checker())
    _deploys(led)
    effects.gated(led)
    effects.naive(led)
    return Portfolio(layer_metrics(led, ASSIGNED), led)

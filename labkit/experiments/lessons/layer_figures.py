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

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from labkit.core.paths import data_root, read_recording
from labkit.experiments.lessons import bound_reflection
from labkit.experiments.lessons import irreversible as effects
from labkit.grading.sealed import load_search_case
from labkit.grading.verdicts import Checker
from labkit.loop.control.bound import run_tool_task
from labkit.loop.control.layer_metrics import LayerMetrics, UnitRow, layer_metrics
from labkit.loop.engine.stopping import NoNewEvidence
from labkit.loop.search.search_case import search
from labkit.record.budget import Budget, limits
from labkit.record.events import Kind, Role
from labkit.record.ledger import Ledger

__all__ = ["ASSIGNED", "COMMAND", "DEPENDS_ON", "Portfolio", "portfolio", "record", "recorded", "write"]

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
    led.record(
        INVALID,
        0,
        Role.CONTROL,
        Kind.STOP,
        detail={
            "unit": INVALID,
            "status": "invalid_environment",
            "reason": f"environment check: task needs {wanted!r}, host offers {offered!r}",
        },
    )


def _deploys(led: Ledger) -> None:
    br = bound_reflection
    bound_reflection.compare(led)  # deploy-unbound, deploy-bound
    budget = Budget(limits(cost_units=br.BUDGET), ledger=led, run_id="deploy-unbound-capped")
    run_tool_task(
        br.SimulatedShell(),
        br.artifact_of,
        br.Unbound(),
        br.FIRST,
        budget=budget,
        ledger=led,
        run_id="deploy-unbound-capped",
        unit="deploy-unbound-capped",
        rules=(NoNewEvidence(3),),
    )


def portfolio(checker: Checker | None = None) -> Portfolio:
    led = Ledger()
    _searches(led, checker or Checker())
    _deploys(led)
    effects.gated(led)
    effects.naive(led)
    return Portfolio(layer_metrics(led, ASSIGNED), led)


# The page reads the metrics from their recording (the searches' sealed confirmations are real
# pytest runs, never cached); tests/test_lessons.py measures them again and asserts the same.
COMMAND = "python -m labkit.experiments.lessons.layer_figures --write"
DEPENDS_ON = ("pytest",)  # the validator runs pytest; the rest is the ledger's arithmetic


def _path() -> Path:
    return data_root() / "lessons" / "layer_metrics.json"


def write() -> Path:
    """Run every unit (`portfolio()`) and record its layer metrics with the packages they depend on."""
    from labkit.core.versions import package_versions

    data = {"label": "recorded real runs: scripted routes and tools, real dev checks and sealed confirmations",
            "command": COMMAND, "metrics": asdict(portfolio().metrics), "versions": package_versions(DEPENDS_ON)}  # fmt: skip
    path = _path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return path


def record() -> dict[str, Any]:
    """The recording as stored (label, command, metrics, package versions)."""
    return read_recording(_path(), COMMAND)


def recorded() -> LayerMetrics:
    """The layer metrics as recorded (what the page shows on open)."""
    m = dict(record()["metrics"])
    return LayerMetrics(**{**m, "rows": tuple(UnitRow(**r) for r in m["rows"])})


if __name__ == "__main__":
    import sys

    if "--write" not in sys.argv[1:]:
        raise SystemExit(f"usage: {COMMAND}")
    print(write())

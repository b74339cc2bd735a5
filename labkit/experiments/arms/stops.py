"""Stopping behaviour measured (seed 002 §7), and when open search is the wrong tool.

- `stop_audit`: every job of an arms ledger — why it stopped (the engine's STOP rule) and,
  against the hidden outcome recorded per round, whether the stop was **on time** (at the
  first round the hidden tests passed, or never needed a round), **late** (it kept working
  after the hidden tests already passed; `broke` if it then ended wrong), **early** (it
  declared "resolved" on the visible tests while the hidden tests fail), or **cut off** (a cap
  or the budget ended it while the hidden tests fail: whether more would help is unknown).
- `fixed_procedure`: the api_change task by a known procedure (apply the migration, one
  verification, the confirmation) against the open frontier search, both run for real, priced
  by the case's declared cost table.
- `weak_verifier`: a published run re-graded (Reflexion's single-shot GPT-4 HumanEval
  solutions): how often the model's own tests accept a solution the hidden check rejects, and
  the expected loss of shipping on that verifier's pass against escalating every task, for
  stated losses (parameters, not measurements).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

import polars as pl

from labkit.core import patch as patches
from labkit.core.paths import DATA
from labkit.core.versions import package_versions
from labkit.experiments.arms.arm_metrics import runs
from labkit.experiments.arms.planning import compare
from labkit.experiments.published.ladder import load_recording
from labkit.grading.sealed import load_search_case
from labkit.grading.verdicts import Checker
from labkit.loop.search.search_case import search, spend
from labkit.record.events import Kind
from labkit.record.ledger import Ledger

__all__ = [
    "COMMAND",
    "DEPENDS_ON",
    "FixedVsSearch",
    "RECORDING",
    "WeakVerifier",
    "audit_counts",
    "fixed_procedure",
    "measure",
    "recorded",
    "stop_audit",
    "timing",
    "weak_verifier",
]

DEPENDS_ON = ("numpy", "polars", "pytest")  # the packages the recording's numbers depend on

RECORDING = DATA / "arms" / "stopping.json"
COMMAND = "python -m labkit.experiments.arms.stops"
SWEEP = DATA / "arms" / "simulated_default.sqlite"
LOSSES = (1.0, 10.0, 100.0)  # loss of shipping one wrong answer, in reviews (parameters)


def timing(scores: list[tuple[int, bool]], rule: str) -> str:
    """on time | late | late, broke | early | cut off, from the hidden outcome per round."""
    last = scores[-1][0] if scores else 0
    first_right = next((r for r, ok in scores if ok), None)
    final = scores[-1][1] if scores else False
    if first_right is not None and first_right < last:
        return "late" if final else "late, broke"
    if final:
        return "on time"
    return "early" if rule == "resolved" else "cut off"


def stop_audit(ledger: Ledger) -> pl.DataFrame:
    """One row per job: arm, stop rule, timing against the hidden outcome."""
    frame = runs(ledger)
    rules: dict[str, str] = {}
    for e in ledger.events():
        if e.kind == Kind.STOP and e.detail.get("run"):
            rules[e.run_id] = str(e.detail.get("rule", ""))
    rows = [
        {
            "arm": r["arm"],
            "run": r["run"],
            "stop rule": rules.get(r["run"], "none"),
            "timing": timing([tuple(s) for s in r["scores"]], rules.get(r["run"], "")),
            "correct": r["correct"],
        }
        for r in frame.iter_rows(named=True)
    ]
    return pl.DataFrame(rows)


@dataclass(frozen=True, kw_only=True)
class FixedVsSearch:
    search_spent: float
    search_status: str
    search_branches: int
    procedure_spent: float
    procedure_status: str
    prices: dict[str, float]


def fixed_procedure(*, open_search: bool = True) -> FixedVsSearch:
    """Both ways through data/api_change for real, priced by its declared cost table
    (`open_search=False`: the known procedure only; the search's figures are then 0)."""
    case, checker = load_search_case(DATA / "api_change"), Checker()
    spent, status, branches = 0.0, "not run", 0
    if open_search:
        baseline = checker.check(case.case.start, case.suite).verdict
        ledger = Ledger()
        found = search(case, checker, baseline, total=15, reserve=2, ledger=ledger, run_id="open")
        spent, status, branches = spend(ledger, "open", 15).total, found.status, len(found.branches)
    known = patches.apply(case.case.start, case.case.patches["fix_callers"])  # the migration as written
    dev = checker.check(known, case.suite).verdict.resolved
    final = case.sealed(checker.validator).confirm(known) if dev else False
    costs = dict(case.costs)
    price = costs["execute"] + costs["verify"] + (costs["confirm"] if dev else 0.0)
    return FixedVsSearch(
        search_spent=spent,
        search_status=status,
        search_branches=branches,
        procedure_spent=price,
        procedure_status="success" if final else "incomplete",
        prices=costs,
    )


@dataclass(frozen=True)
class WeakVerifier:
    run: str
    tasks: int
    accepted: int  # the model's own tests pass
    accepted_wrong: int  # ... and the hidden check fails
    rejected_right: int  # own tests fail, the hidden check passes

    def expected_loss(self, loss_wrong: float, review: float) -> tuple[float, float]:
        """Per task: (ship on the verifier's pass, escalate every task to a reviewer), where
        a rejected task is escalated too. Losses are parameters, stated by the caller."""
        ship = (self.accepted_wrong * loss_wrong + (self.tasks - self.accepted) * review) / self.tasks
        return ship, review


def weak_verifier(run: str = "simple-humaneval") -> WeakVerifier:
    rows, _ = load_recording()
    by: dict[str, dict[str, bool]] = {}
    for r in rows:
        if r["run"] == run and r["rung"] in ("own_tests", "check"):
            by.setdefault(r["task_id"], {})[r["rung"]] = bool(r["passed"])
    both = [v for v in by.values() if len(v) == 2]
    c = Counter((v["own_tests"], v["check"]) for v in both)
    return WeakVerifier(run, len(both), c[(True, True)] + c[(True, False)], c[(True, False)], c[(False, True)])


def audit_counts(frame: pl.DataFrame) -> list[dict[str, Any]]:
    """Per arm: jobs by stop rule and by timing (integers)."""
    out = []
    for arm in sorted(set(frame["arm"])):
        f = frame.filter(pl.col("arm") == arm)
        out.append(
            {
                "arm": arm,
                "jobs": f.height,
                **{f"rule {k}": int((f["stop rule"] == k).sum()) for k in STOP_RULES},
                **{k: int((f["timing"] == k).sum()) for k in TIMINGS},
            }
        )
    return out


TIMINGS = ("on time", "late", "late, broke", "early", "cut off")
# how a job ended: its tests passed, its own check accepted (an intrinsic arm), the round cap, the budget
STOP_RULES = ("resolved", "own-check-accepts", "round-cap", "budget")


def measure(*, open_search: bool = True) -> dict[str, Any]:
    sweep = Ledger(SWEEP, read_only=True)
    verifiers = []
    for run in ("simple-humaneval", "reflexion-humaneval"):
        w = weak_verifier(run)
        verifiers.append(
            {
                **asdict(w),
                "loss": {f"{L:g}": w.expected_loss(L, 1.0)[0] for L in LOSSES},
                "break_even": (w.tasks - (w.tasks - w.accepted)) / w.accepted_wrong if w.accepted_wrong else None,
            }
        )
    out = {
        "command": COMMAND,
        "audit_source": "data/arms/simulated_default.sqlite (SIMULATED policy, recorded run, real validation)",
        "audit": audit_counts(stop_audit(sweep)),
        "planning_source": "SIMULATED toy (labkit.experiments.arms.planning): stated parameters",
        "planning": compare(),
        "fixed_source": "recorded real run on data/api_change (routes scripted: simulated; checks real)",
        "fixed": asdict(fixed_procedure(open_search=open_search)),
        "verifier_source": "published run re-graded (Reflexion authors' GPT-4 HumanEval logs, labkit's ladder)",
        "verifier": verifiers,
        "versions": package_versions(DEPENDS_ON),
    }  # fmt: skip
    return dict(json.loads(json.dumps(out)))


def recorded() -> dict[str, Any]:
    return dict(json.loads(RECORDING.read_text()))


if __name__ == "__main__":  # regenerate the recording
    RECORDING.write_text(json.dumps(measure(), indent=1) + "\n")
    print(f"wrote {RECORDING}")

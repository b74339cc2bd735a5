"""The long project's measurements, recorded: two policies, and QA sources with a swept correlation, over seeds.

`measure` runs the harness (real validations, simulated roles) and returns a JSON-ready
recording; `python -m labkit.experiments.long_projects record` writes it to
data/long_projects/shop_study.json. Everything the pages and tests show is derived from that
recording by the functions below (`progress`, `at_iterations`, `at_cost`, `flips`, `qa_table`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from labkit.experiments.long_projects.iterations import Policy, ProjectRun, run_project
from labkit.experiments.long_projects.project import Project
from labkit.experiments.long_projects.roles import DeveloperParams, Prices, QaParams

__all__ = [
    "COMMAND", "COMPARE_CALLS", "COMPARE_COST_UNITS", "COMPARE_ITERATIONS", "COMPARE_TOKENS", "DEPENDS_ON", "Point", "POLICIES", "QA_SOURCES", "QA_SWEEP", "RECORDING", "SEEDS", "at_cost", "at_iterations", "flips",
    "measure", "progress", "qa_label", "qa_table", "run_row", "runs_of", "summary",
]  # fmt: skip

COMMAND = "python -m labkit.experiments.long_projects record"
RECORDING = "long_projects/shop_study.json"
POLICIES = (Policy("one item per iteration", 1), Policy("three items per iteration", 3))
QA_SOURCES = (QaParams("independent"), QaParams("same-source"))
# the same-source correlation swept (one item per iteration): 0 shares nothing beyond p_miss
QA_SWEEP = (QaParams("same-source", correlation=0.0), QaParams("same-source", correlation=0.5))


def qa_label(qa: QaParams) -> str:
    """How a run's QA is named in the recording: its source, and a same-source QA's correlation."""
    return qa.source if qa.source == "independent" else f"{qa.source}, correlation {qa.correlation:g}"


SEEDS = tuple(range(6))
ITERATIONS = 10
MEASURES = ("iterations", "calls", "tokens", "cost_units")
DEPENDS_ON = ("pytest",)  # the validator's test runner: its verdicts are the numbers


def run_row(run: ProjectRun) -> dict[str, Any]:
    """One run as the recording stores it (the hidden scores in their own field)."""
    return {
        "run_id": run.run_id,
        "policy": run.policy.name,
        "qa": qa_label(run.qa),
        "seed": run.seed,
        "qa_checks": [c.nodeid for c in run.qa_checks],
        "iterations": [
            {
                "index": it.index,
                "plan": list(it.plan),
                "variants": [list(v) for v in it.variants],
                "diff": it.diff,
                "decision": it.decision,
                "reason": it.reason,
                "snapshot": it.snapshot,
                "qa_ran": it.qa_ran,
                "qa_failing": list(it.qa_failing),
                "qa_findings": list(it.qa_findings),
                "items": [
                    {
                        "id": i.id,
                        "title": i.title,
                        "open": i.open,
                        "origin": i.origin,
                        "reopened": i.reopened,
                        "evidence": list(i.evidence),
                    }
                    for i in it.items
                ],
                "added": it.tally.added,
                "closed": it.tally.closed,
                "reopened": it.tally.reopened,
                "open": it.tally.open,
                "calls": it.usage.calls,
                "tokens": it.usage.tokens,
                "cost_units": round(it.usage.cost_units, 6),
            }
            for it in run.iterations
        ],
        "hidden": [
            {
                "iteration": h.iteration,
                "passed": h.passed,
                "total": h.total,
                "failing_requirements": list(h.failing_requirements),
            }
            for h in run.hidden
        ],
    }


def measure(project: Project, seeds: Sequence[int] = SEEDS, iterations: int = ITERATIONS) -> dict[str, Any]:
    """Every (policy, independent QA) and (first policy, same-source QA at each correlation) run, per seed."""
    from labkit.core.versions import package_versions
    from labkit.grading.validator import Validator
    from labkit.grading.verdicts import Checker, VerdictCache
    from labkit.record.ledger import Ledger

    checker = Checker(Validator(), VerdictCache())
    ledger = Ledger()
    runs = []
    for seed in seeds:
        combos = [(p, QA_SOURCES[0]) for p in POLICIES] + [(POLICIES[0], q) for q in (QA_SOURCES[1], *QA_SWEEP)]
        for policy, qa in combos:
            run = run_project(
                project,
                checker,
                ledger,
                policy=policy,
                qa=qa,
                seed=seed,
                iterations=iterations,
                run_id=f"{policy.items_per_iteration}x-{qa_label(qa)}-{seed}".replace(", correlation ", "-"),
            )
            runs.append(run_row(run))
    return {
        "command": COMMAND,
        "project": project.name,
        "iterations": iterations,
        "seeds": list(seeds),
        "label": "simulated roles (developer, planner, QA), real code and real validations",
        "developer": asdict(DeveloperParams()),
        "qa": [asdict(q) for q in (*QA_SOURCES, *QA_SWEEP)],
        "prices": asdict(Prices()),
        "policies": [asdict(p) for p in POLICIES],
        "runs": runs,
        "versions": package_versions(DEPENDS_ON),
    }


def runs_of(rec: Mapping[str, Any], policy: str, qa: str) -> list[dict[str, Any]]:
    return [r for r in rec["runs"] if r["policy"] == policy and r["qa"] == qa]


def _score_after(run: Mapping[str, Any], measure: str, amount: float) -> float:
    """The hidden score (fraction passed) of the last iteration whose cumulative `measure` is
    within `amount` (iterations: its index); the start's score if none is."""
    best = run["hidden"][0]["passed"] / run["hidden"][0]["total"]
    for it, h in zip(run["iterations"], run["hidden"][1:], strict=True):
        spent = it["index"] if measure == "iterations" else it[measure]
        if spent <= amount:
            best = h["passed"] / h["total"]
    return best


@dataclass(frozen=True)
class Point:
    measure: str  # "iterations", "calls", "tokens", "cost_units"
    amount: float
    scores: tuple[float, ...]  # mean hidden score per policy (POLICIES' order)

    @property
    def leader(self) -> str:
        best = max(self.scores)
        leaders = [p.name for p, s in zip(POLICIES, self.scores, strict=True) if s == best]
        return leaders[0] if len(leaders) == 1 else "tie"


def _point(rec: Mapping[str, Any], measure: str, amount: float) -> Point:
    scores = []
    for p in POLICIES:
        runs = runs_of(rec, p.name, qa_label(QA_SOURCES[0]))
        scores.append(round(sum(_score_after(r, measure, amount) for r in runs) / len(runs), 4))
    return Point(measure, amount, tuple(scores))


def at_iterations(rec: Mapping[str, Any], counts: Sequence[int]) -> list[Point]:
    return [_point(rec, "iterations", n) for n in counts]


def at_cost(rec: Mapping[str, Any], measure: str, amounts: Sequence[float]) -> list[Point]:
    return [_point(rec, measure, a) for a in amounts]


def flips(
    rec: Mapping[str, Any], iterations: Sequence[int], measure: str, amounts: Sequence[float]
) -> list[tuple[Point, Point]]:
    """Pairs (at matched iterations, at matched `measure`) whose leaders differ (ties excluded)."""
    a, b = at_iterations(rec, iterations), at_cost(rec, measure, amounts)
    return [(x, y) for x in a for y in b if "tie" not in (x.leader, y.leader) and x.leader != y.leader]


def progress(run: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per iteration: items added, closed, reopened, still open; the hidden score (reader only)."""
    return [
        {
            "iteration": it["index"],
            "added": it["added"],
            "closed": it["closed"],
            "reopened": it["reopened"],
            "open": it["open"],
            "hidden passed": h["passed"],
            "hidden total": h["total"],
            "calls": it["calls"],
            "tokens": it["tokens"],
            "cost units": it["cost_units"],
        }
        for it, h in zip(run["iterations"], run["hidden"][1:], strict=True)
    ]


def qa_table(rec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Same-source vs independent QA (first policy): per source, over the seeds, the bugs the
    hidden benchmark still finds at the end that QA let through, and what QA filed."""
    rows = []
    for qa in (QA_SOURCES[0], *sorted((QA_SOURCES[1], *QA_SWEEP), key=lambda q: q.correlation)):
        runs = runs_of(rec, POLICIES[0].name, qa_label(qa))
        shipped = [len(r["hidden"][-1]["failing_requirements"]) for r in runs]
        last_review = [next((it for it in reversed(r["iterations"]) if it["qa_ran"]), None) for r in runs]
        uncaught = [
            sum(1 for rid in r["hidden"][-1]["failing_requirements"] if not it or rid not in it["qa_findings"])
            for r, it in zip(runs, last_review, strict=True)
        ]
        rows.append(
            {
                "QA source": qa.source,
                "correlation with the developer": qa.correlation if qa.source == "same-source" else None,
                "runs": len(runs),
                "QA checks written (mean)": round(sum(len(r["qa_checks"]) for r in runs) / len(runs), 2),
                "items reopened (total)": sum(it["reopened"] for r in runs for it in r["iterations"]),
                "bugs shipped (hidden, total)": sum(shipped),
                "missed by QA's last review (total)": sum(uncaught),
                "runs shipping a bug": sum(1 for s in shipped if s),
                "final hidden score (mean)": round(
                    sum(r["hidden"][-1]["passed"] / r["hidden"][-1]["total"] for r in runs) / len(runs), 4
                ),
            }
        )
    return rows


COMPARE_ITERATIONS = tuple(range(1, ITERATIONS + 1))
COMPARE_COST_UNITS = (10.0, 20.0, 30.0, 40.0, 60.0, 80.0)
COMPARE_CALLS = (5, 10, 15, 20, 30)
COMPARE_TOKENS = (10_000, 20_000, 40_000, 60_000)


def summary(rec: Mapping[str, Any]) -> dict[str, Any]:
    """The numbers the page and the issue's note show, from the recording."""

    def rows(points: list[Point]) -> list[dict[str, Any]]:
        return [{"amount": p.amount, "scores": list(p.scores), "ahead": p.leader} for p in points]

    flipped = flips(rec, COMPARE_ITERATIONS, "cost_units", COMPARE_COST_UNITS)
    return {
        "policies": [p.name for p in POLICIES],
        "at_iterations": rows(at_iterations(rec, COMPARE_ITERATIONS)),
        "at_cost_units": rows(at_cost(rec, "cost_units", COMPARE_COST_UNITS)),
        "at_calls": rows(at_cost(rec, "calls", COMPARE_CALLS)),
        "at_tokens": rows(at_cost(rec, "tokens", COMPARE_TOKENS)),
        "first_flip": [[f.amount, f.leader] for f in flipped[0]] if flipped else None,
        "qa": qa_table(rec),
    }

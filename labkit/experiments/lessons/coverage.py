"""The coverage counterfactual (seed 000, cache case): reflection is capped by acceptance coverage.

"If the same-user hit test had never been written, the loop would quietly accept 'disable
the cache'." Two real engine runs from v1 with the same proposal, "disable the cache":

- **covered**: the protected acceptance as written (isolation + same-user hits) — the patch
  fixes isolation but breaks the hit tests, so the engine rolls it back;
- **uncovered**: the same acceptance with the protective same-user hit tests removed — the
  patch turns the acceptance green and the engine keeps it.

In the uncovered run the full acceptance is attached as the *hidden* suite: it never reaches
the strategy or the decision, it only scores what was kept, so the table can say what the
loop did not see.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from labkit.experiments.case_task import task_of
from labkit.grading.acceptance import AcceptanceSuite
from labkit.grading.cases import load_case
from labkit.loop.engine import run
from labkit.loop.strategies.rewrite import Rivals

if TYPE_CHECKING:
    from labkit.grading.validator import Validator
    from labkit.grading.verdicts import Checker
    from labkit.record.ledger import Ledger

__all__ = ["CoverageRun", "PATCH", "counterfactual", "without_protection"]

PATCH = "disable_cache"


@dataclass(frozen=True, kw_only=True)
class CoverageRun:
    name: str  # "covered" | "uncovered"
    run_id: str
    suite: str  # digest of the acceptance the loop judged by
    protective: int  # how many protective (PASS_TO_PASS) tests that acceptance had
    decision: str  # the engine's decision on "disable the cache"
    reason: str
    kept: str  # label of the candidate the run ended holding
    visible_green: bool  # the held candidate against the acceptance the loop saw
    full_green: bool  # the held candidate against the full protected acceptance


def without_protection(suite: AcceptanceSuite) -> AcceptanceSuite:
    """The same acceptance with every protective (PASS_TO_PASS) test and its file removed."""
    keep_files = {p: t for p, t in suite.tests.items() if any(i.startswith(p + "::") for i in suite.fail_to_pass)}
    groups = {g: ids for g, ids in suite.groups.items() if set(ids) <= set(suite.fail_to_pass)}
    return AcceptanceSuite(
        name=f"{suite.name} (no protective tests)",
        tests=keep_files,
        fail_to_pass=suite.fail_to_pass,
        pass_to_pass=(),
        groups=groups,
    )


def counterfactual(
    validator: Validator | Checker | None = None, ledger: Ledger | None = None
) -> tuple[CoverageRun, CoverageRun]:
    """Run the engine twice on v1 with the one proposal "disable the cache": (covered, uncovered)."""
    from labkit.record.ledger import Ledger

    c = load_case("cache_isolation")
    led = ledger if ledger is not None else Ledger()
    strategy = Rivals(((PATCH, c.patch(PATCH)),), name="scripted: disable the cache")
    arms = []
    for name, suite in (("covered", c.suite), ("uncovered", without_protection(c.suite))):
        task = replace(task_of(c), suite=suite, hidden=c.suite)  # the full acceptance only scores
        out = run([task], strategy, validator, rounds=1, ledger=led, run_id=f"coverage-{name}")
        trace = out.traces[task.id]
        attempt = trace.rounds[0].attempts[0]
        score = out.scores(task.id)[-1]  # the held state, scored on the hidden (full) suite
        arms.append(
            CoverageRun(
                name=name,
                run_id=out.run_id,
                suite=trace.suite,
                protective=len(suite.pass_to_pass),
                decision=attempt.decision.decision.value,
                reason=attempt.decision.reason,
                kept=trace.final.label,
                visible_green=bool(trace.final_verdict.resolved),
                full_green=score.correct,
            )
        )
    return arms[0], arms[1]

"""Ending a task, run for real on the search case (seed 002 §8; `labkit.loop.strategies.memory.ending`).

On `data/api_change` (scripted route generator: *simulated*; every execution, verification and
confirmation real, in labkit's validator), one ledger:

1. the search at budget 15 succeeds; `end_task` reads its ledger into an experience candidate
   (task, evidence, applicability, counterexamples, exposure label, attribution uncertainty);
2. the search at budget 13 ends incomplete; its candidate holds findings, and `promote` refuses
   to turn it into an "always do X" skill;
3. a candidate built from the sealed final set's diagnostics: `promote` refuses it; once
   authorised as development material, a derived example and a lesson derived from that
   inherit the label, and the next search with the same final set is refused at confirmation
   (ExposedFinalSet); with replacement final test data (`data/ending_task/`) it confirms.
"""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from typing import Any

from labkit.core.errors import ExposedFinalSet, MemoryRefused
from labkit.core.paths import DATA
from labkit.core.versions import package_versions
from labkit.grading.acceptance import AcceptanceSuite
from labkit.grading.sealed import SearchCase, load_search_case
from labkit.grading.verdicts import Checker
from labkit.loop.search.frontier import SearchResult
from labkit.loop.search.readback import read_search
from labkit.loop.search.search_case import search, spend
from labkit.loop.strategies.memory.ending import (
    ExperienceCandidate,
    ExposureLabel,
    Finding,
    authorise,
    derive,
    promote,
)
from labkit.record.events import Kind
from labkit.record.ledger import Ledger

__all__ = [
    "COMMAND",
    "DEPENDS_ON",
    "RECORDING",
    "end_task",
    "measure",
    "recorded",
    "replacement_final",
]

DEPENDS_ON = ("pytest",)  # the packages the recording's numbers depend on

RECORDING = DATA / "memory" / "ending_task.json"
COMMAND = "python -m labkit.experiments.memory.ending_run"
REPLACEMENT = DATA / "ending_task"


def end_task(ledger: Ledger, result: SearchResult, case: SearchCase, total: float) -> ExperienceCandidate:
    """The experience candidate a finished search proposes, read from its ledger."""
    steps = read_search(ledger, result.run_id, case.checks).steps  # the search, read from the engine's events
    branches = [e for e in steps if e.kind == Kind.BRANCH]
    stop = next(e for e in steps if e.kind == Kind.STOP)
    paid = spend(ledger, result.run_id, total)
    evidence = tuple(
        [f"event {e.seq}: branch {e.detail['name']!r} {e.detail['outcome']}" for e in branches]
        + [f"event {e.seq}: confirmation {e.detail.get('confirmed')}" for e in steps if e.kind == Kind.CONFIRM]
        + [
            f"event {stop.seq}: stop {stop.detail['status']} ({stop.detail['reason']}); "
            f"spent {paid.total:g} of {total:g} cost units"
        ]
    )
    failed = tuple(f"{e.detail['name']}: {e.detail['reason']}" for e in branches if e.detail["outcome"] != "sealed")
    attribution = (
        "one task in one environment (n = 1): nothing here separates the route from the case",
        "routes came from a scripted generator (simulated), so no model's choice is being credited",
        f"{len(result.sealed)} of {len(branches)} routes sealed"
        + (
            f"; the winner is the pre-registered rule's pick ({result.rule})"
            if result.sealed
            else "; an unexecuted route is untested, not refuted"
        ),
    )
    findings: tuple[Finding, ...] = ()
    if not result.success:
        findings = (
            Finding(
                f"the search stopped {result.reason} with {len(result.sealed)} sealed route(s): "
                f"{paid.left:g} of {total:g} units left could not pay the next execution and "
                "verification plus the reserved confirmation",
                (evidence[-1],),
                "unreachable within budget",
            ),
        )
    return ExperienceCandidate(
        task=f"{case.case.name}: {case.case.title} ({case.case.environment}; start {case.case.start.digest})",
        outcome=f"{result.status} ({result.reason})",
        evidence=evidence,
        applicability=(
            "a library the repository depends on renamed an API its callers use",
            "the callers live in this repository and may be edited; the library may not",
            f"environment as verified: {case.case.environment}",
        ),
        counterexamples=failed,
        exposure=ExposureLabel("development"),  # dev checks only; the confirmation said pass/fail
        attribution=attribution,
        strategy=f"route {result.winner.route!r}" if result.winner and result.success else "",
        findings=findings,
    )


def replacement_final(case: SearchCase) -> AcceptanceSuite:
    """New final test data (data/ending_task/): other users, other assertions, same release file."""
    text = (REPLACEMENT / "test_final_v2.py").read_text()
    release = case.final.tests["final/userlib_release.py"]
    node = "final/test_final_v2.py::test_profiles_and_reports_on_new_data"
    return AcceptanceSuite(
        name=f"{case.case.name} final v2 (sealed, replaced)",
        tests={"final/test_final_v2.py": text, "final/userlib_release.py": release},
        fail_to_pass=(node,),
        pass_to_pass=(),
    )


def _with_final(case: SearchCase, final: AcceptanceSuite) -> SearchCase:
    return replace(case, case=replace(case.case, hidden=final))


def measure(ledger: Ledger | None = None) -> dict[str, Any]:
    """Every step above on one ledger; returns the recording's content."""
    ledger = ledger if ledger is not None else Ledger()
    case, checker = load_search_case(DATA / "api_change"), Checker()
    baseline = checker.check(case.case.start, case.suite).verdict
    ok = search(case, checker, baseline, total=15, reserve=2, ledger=ledger, run_id="end-15")
    short = search(case, checker, baseline, total=13, reserve=2, ledger=ledger, run_id="end-13")
    won, lost = end_task(ledger, ok, case, 15), end_task(ledger, short, case, 13)
    skill = promote(won, "skill", "when a dependency renames an API, fix the callers (verify on its checks)")
    refusals = []
    try:
        promote(lost, "skill", "always raise the budget")
    except MemoryRefused as exc:
        refusals.append(("incomplete task -> skill", str(exc)))
    sealed = replace(
        won,
        exposure=ExposureLabel("sealed", final_set=case.final.digest),
        evidence=("diagnostics of the sealed final set (test output read for repair)",),
    )
    try:
        promote(sealed, "example", "the final test's users and expected lines")
    except MemoryRefused as exc:
        refusals.append(("sealed diagnostics -> example", str(exc)))
    allowed = authorise(sealed, ledger, authorised_by="course owner", reason="teach from the failing final test")
    example = promote(allowed, "example", "the final test's users and expected lines")
    lesson = derive(example, "lesson", "check end-to-end output on the released library")
    try:
        search(case, checker, baseline, total=15, reserve=2, ledger=ledger, run_id="end-exposed")
        exposed = "confirmed (NOT refused)"
    except ExposedFinalSet as exc:
        exposed = f"refused: {exc}"
    fresh = search(
        _with_final(case, replacement_final(case)),
        checker,
        baseline,
        total=15,
        reserve=2,
        ledger=ledger,
        run_id="end-replaced",
    )
    out = {
        "command": COMMAND,
        "source": "recorded real run (routes scripted: simulated; executions, checks, confirmations real)",
        "success": asdict(won), "incomplete": asdict(lost), "skill": asdict(skill),
        "refusals": [{"attempt": a, "why": w} for a, w in refusals],
        "derived": [asdict(example), asdict(lesson)], "final_set": case.final.digest,
        "exposed_confirmation": exposed,
        "replaced": {"final_set": replacement_final(case).digest, "status": fresh.status,
                     "confirmed": fresh.confirmed},
        "versions": package_versions(DEPENDS_ON),
    }  # fmt: skip
    return dict(json.loads(json.dumps(out)))  # as the recording reads back (lists, not tuples)


def recorded() -> dict[str, Any]:
    return dict(json.loads(RECORDING.read_text()))


if __name__ == "__main__":  # regenerate the recording
    RECORDING.write_text(json.dumps(measure(), indent=1) + "\n")
    print(f"wrote {RECORDING}")

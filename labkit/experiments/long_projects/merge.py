"""Dependency-aware merge (issue 24; seed 002 §6, "Stellar Colosseum") on the one engine.

Parts of one task are generated in parallel (scripted) and each passes its own local tests.
Four ways to merge them, each a sequence of *stages*; a stage is one `labkit.loop.engine.run`
whose tasks are checks (`local:<part>`, `edge:<a>-><b>`, see `merge_graph`) on the current
merge. The engine validates every check in the sandboxed validator, asks the strategy about
each refuted one, validates the proposed repair on that check and keeps it only if the check
then holds (keep="resolved"); every validation is paid from the policy's budget and every
event lands in the ledger. The strategy only proposes: `Refuter` reads the counterexample the
validator reported and replies with the case's scripted repair (labelled scripted).

- naive: accept every part whose local tests pass;
- repair_only: also search every interface for counterexamples, keep the repairs, stop;
- recheck_all: after each repair, re-check every conclusion again;
- dependency_aware: after each repair, re-check exactly the conclusions the graph says
  the change made stale (`Dag.stale`).

Then the lab (not the policy, not paid) runs the integration tests, scores the hidden
benchmark, and keeps each refutation as a `critique` ledger event. The measured numbers are
recorded in `data/long_projects/merge_recording.json`:

    python -m labkit.experiments.long_projects.merge --record
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from labkit.core.errors import InvalidSetting
from labkit.core.paths import DATA, read_recording
from labkit.core.types import Candidate, Verdict
from labkit.core.versions import package_versions
from labkit.experiments.long_projects.merge_case import MergeCase, Part, Repair, load_merge_case
from labkit.grading.validator import Validator
from labkit.grading.verdicts import Checker, VerdictCache
from labkit.loop import engine
from labkit.loop.engine.strategy import Child, Proposal, Situation
from labkit.loop.engine.trace import Task
from labkit.record.budget import Budget, limits
from labkit.record.events import Kind, Role
from labkit.record.ledger import Ledger

__all__ = [
    "COMMAND",
    "CheckRun",
    "Critique",
    "DEPENDS_ON",
    "LABEL",
    "MergeResult",
    "POLICIES",
    "RECORDING",
    "Refuter",
    "measure",
    "merge",
    "read_recorded",
    "record",
]

DEPENDS_ON = ("pytest",)  # the validator's runner: what the verdicts depend on

POLICIES = ("naive", "repair_only", "recheck_all", "dependency_aware")
LABEL = "scripted"
RECORDING = DATA / "long_projects" / "merge_recording.json"
COMMAND = "python -m labkit.experiments.long_projects.merge --record"
BUDGET = 40.0  # cost units per policy: one per paid validation
MAX_STAGES = 4


@dataclass(frozen=True)
class CheckRun:
    """One check as one stage's engine run validated it."""

    stage: int
    check: str
    held: bool  # passed when the stage began
    repaired: str = ""  # the part a kept repair changed ("" if none)
    recheck: bool = False  # run because an earlier repair made it stale (or re-check-all)


@dataclass(frozen=True, kw_only=True)
class Critique:
    """A refutation kept at aggregation: what was refuted, by what, and what changed."""

    stage: int
    check: str
    part: str
    premise: str
    counterexample: str
    why: str
    kept: bool


@dataclass(frozen=True, kw_only=True)
class MergeResult:
    policy: str
    runs: tuple[CheckRun, ...]
    critiques: tuple[Critique, ...]
    variants: Mapping[str, str]  # part -> "as generated" | "repaired"
    integration: tuple[int, int]  # receipts passed, of
    hidden: tuple[int, int]  # hidden receipts passed, of (scored by the lab, never shown)
    cost_units: float  # what the policy paid (budget spent)
    recheck_cost: float  # the part of it paid for re-checks
    stale_caught: int  # re-checks that refuted a conclusion which had held before

    @property
    def integration_pass(self) -> bool:
        return self.integration[0] == self.integration[1]

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "variants": dict(self.variants)}


@dataclass(frozen=True)
class Refuter:
    """The strategy: for a refuted interface, the case's scripted repair (never for a local check)."""

    case: MergeCase
    variants: Mapping[str, Part]
    name: str = "refute + repair (scripted)"
    simulated: bool = True

    def propose(self, situation: Situation) -> Proposal:
        check = situation.case
        repair = self.repair_for(check)
        if repair is None:
            return Proposal(note=f"{check}: no repair to propose")
        variants = {**self.variants, repair.part: repair.variant}
        target = self.case.merged(variants, f"repair:{repair.part}")
        why = f"{check} refuted: {counterexample(situation.verdict)}; {repair.why}; change {repair.part} ({repair.premise})"
        return Proposal(
            children=(Child(target=target, name=f"repair:{repair.part}", source="refute"),),
            note=why,
        )

    def repair_for(self, check: str) -> Repair | None:
        for r in self.case.repairs:
            if f"edge:{r.edge}" == check and self.variants[r.part] != r.variant:
                return r
        return None


def counterexample(verdict: Verdict) -> str:
    """The first failing test's message: the check's own count and smallest counterexample."""
    failures = verdict.evidence.failures
    if not failures:
        return ""
    return failures[0].message.removeprefix("AssertionError: ").splitlines()[0]


@dataclass(kw_only=True)
class _Merge:
    """One policy's merge in progress: the variants in use and what its stages found."""

    case: MergeCase
    policy: str
    checker: Checker
    ledger: Ledger
    budget: Budget
    variants: dict[str, Part]
    runs: list[CheckRun] = field(default_factory=list)
    critiques: list[Critique] = field(default_factory=list)
    recheck_cost: float = 0.0
    verified: set[tuple[str, str]] = field(default_factory=set)  # (merge digest, check) that held

    @property
    def run_id(self) -> str:
        return f"merge/{self.policy}"

    def candidate(self) -> Candidate:
        return self.case.merged(self.variants, f"{self.policy}: merged")

    def stage(self, n: int, checks: tuple[str, ...], refute: bool, recheck: bool) -> list[str]:
        """One engine run over `checks` on the current merge; returns the parts repaired."""
        start = self.candidate()
        tasks = [Task(id=c, start=start, suite=self.case.suite(c, self.variants)) for c in checks]
        strategy = Refuter(self.case, dict(self.variants))
        before = self.budget.spent.cost_units
        out = engine.run(
            tasks,
            strategy,
            self.checker,
            rounds=1 if refute else 0,
            keep="resolved",
            ledger=self.ledger,
            budget=self.budget,
            run_id=f"{self.run_id}/stage-{n}",
        )
        if recheck:
            self.recheck_cost += self.budget.spent.cost_units - before
        repaired: list[str] = []
        for check in checks:
            trace = out.traces[check]
            kept = trace.final.digest != trace.start.digest
            repair = strategy.repair_for(check) if trace.rounds else None
            part = repair.part if kept and repair is not None else ""
            self.runs.append(CheckRun(n, check, trace.start_verdict.resolved, part, recheck))
            if trace.start_verdict.resolved:
                self.verified.add((start.digest, check))
            if kept:  # the engine validated the repaired merge on this check and kept it
                self.verified.add((trace.final.digest, check))
            if repair is not None and not trace.start_verdict.resolved:
                self._critique(n, check, repair, counterexample(trace.start_verdict), kept)
            if part and part not in repaired:
                self.variants[part] = repair.variant if repair is not None else self.variants[part]
                repaired.append(part)
        return repaired

    def _critique(self, n: int, check: str, repair: Repair, example: str, kept: bool) -> None:
        c = Critique(
            stage=n,
            check=check,
            part=repair.part,
            premise=repair.premise,
            counterexample=example,
            why=repair.why,
            kept=kept,
        )
        self.critiques.append(c)
        self.ledger.record(
            self.run_id,
            n,
            Role.DECISION,
            Kind.CRITIQUE,
            evidence=asdict(c),
            detail={
                "unit": self.run_id,
                "stage": f"stage-{n}",
                "check": check,
                "part": c.part,
                "premise": c.premise,
                "counterexample": example,
                "why": c.why,
                "kept": kept,
                "simulated": True,
            },
        )

    def aggregate(self) -> tuple[tuple[int, int], tuple[int, int]]:
        """The lab's own look, after the policy is done: integration tests and the hidden benchmark."""
        final = self.candidate()
        task = Task(
            id="integration",
            start=final,
            suite=self.case.suite("integration", self.variants),
            hidden=self.case.hidden_suite(),
        )
        out = engine.run(
            [task],
            Refuter(self.case, self.variants),
            self.checker,
            rounds=0,
            ledger=self.ledger,
            run_id=f"{self.run_id}/aggregate",
        )
        integration = out.traces[task.id].start_verdict  # the engine's validation of the merged candidate
        assert task.hidden is not None
        hidden = self.checker.lookup(final, task.hidden)  # the engine's hidden score: read, not re-run
        if hidden is None:
            raise ValueError(f"{self.run_id}: the engine kept no hidden verdict for the merged candidate (timed out?)")
        return _receipts(integration), _receipts(hidden)


def _receipts(verdict: Verdict) -> tuple[int, int]:
    """(passed, of) over the parametrised receipts a verdict reports."""
    rows = [r for r in verdict.evidence.results if "[" in r.nodeid]
    return sum(r.outcome == "passed" for r in rows), len(rows)


def merge(
    policy: str,
    case: MergeCase | None = None,
    *,
    checker: Checker | None = None,
    ledger: Ledger | None = None,
) -> MergeResult:
    """Run one merge policy on `case` (default: the receipt pipeline), recorded in `ledger`."""
    if policy not in POLICIES:
        raise InvalidSetting(f"policy must be one of {POLICIES}, got {policy!r}")
    case = case or load_merge_case()
    checker = checker or Checker(Validator(), VerdictCache())
    ledger = ledger if ledger is not None else Ledger()
    run_id = f"merge/{policy}"
    m = _Merge(
        case=case,
        policy=policy,
        checker=checker,
        ledger=ledger,
        budget=Budget(limits(cost_units=BUDGET), ledger=ledger, run_id=run_id),
        variants=dict(case.parts),
    )
    locals_ = tuple(c for c in case.dag.checks() if c.startswith("local:"))
    m.stage(1, locals_, refute=False, recheck=False)
    if policy != "naive":
        edges = tuple(c for c in case.dag.checks() if c.startswith("edge:"))
        changed = m.stage(2, edges, refute=True, recheck=False)
        n = 3
        while changed and policy != "repair_only" and n < 2 + MAX_STAGES:
            if policy == "recheck_all":
                stale = case.dag.checks()
            else:  # exactly what the changes made stale, less what the engine verified on this merge already
                now = m.candidate().digest
                stale = tuple(
                    c
                    for c in case.dag.checks()
                    if any(c in case.dag.stale(p) for p in changed) and (now, c) not in m.verified
                )
            changed = m.stage(n, stale, refute=True, recheck=True)
            n += 1
    integration, hidden = m.aggregate()
    generated = {p: "repaired" if m.variants[p] != case.parts[p] else "as generated" for p in case.dag.parts}
    caught = sum(
        1
        for i, r in enumerate(m.runs)
        if r.recheck and not r.held and any(e.check == r.check and e.held for e in m.runs[:i])
    )
    return MergeResult(
        policy=policy,
        runs=tuple(m.runs),
        critiques=tuple(m.critiques),
        variants=generated,
        integration=integration,
        hidden=hidden,
        cost_units=m.budget.spent.cost_units,
        recheck_cost=m.recheck_cost,
        stale_caught=caught,
    )


def measure(
    case: MergeCase | None = None,
    policies: tuple[str, ...] = POLICIES,
    ledger: Ledger | None = None,
) -> dict[str, MergeResult]:
    """Every policy on the same parts, one shared verdict cache (the prices do not depend on it)."""
    case = case or load_merge_case()
    checker = Checker(Validator(), VerdictCache())
    ledger = ledger if ledger is not None else Ledger()
    return {p: merge(p, case, checker=checker, ledger=ledger) for p in policies}


def record(path: Path = RECORDING) -> dict[str, Any]:
    """Measure every policy and write the recording (what the notebook section reads)."""
    results = measure()
    case = load_merge_case()
    out = {
        "label": LABEL,
        "command": COMMAND,
        "case": case.name,
        "premise": case.premise,
        "parts": list(case.dag.parts),
        "edges": [{"producer": e.producer, "consumer": e.consumer, "carries": e.carries} for e in case.dag.edges],
        "policies": {p: r.as_dict() for p, r in results.items()},
        "versions": package_versions(DEPENDS_ON),
    }
    path.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    return out


def read_recorded(path: Path = RECORDING) -> dict[str, Any]:
    return read_recording(path, COMMAND)


if __name__ == "__main__":
    import sys

    if "--record" in sys.argv:
        data = record()
        print(f"wrote {RECORDING}")
    else:
        data = {"policies": {p: r.as_dict() for p, r in measure().items()}}
    for p, r in data["policies"].items():
        print(
            f"{p:18} integration {r['integration'][0]}/{r['integration'][1]}  hidden {r['hidden'][0]}/{r['hidden'][1]}  "
            f"stale caught {r['stale_caught']}  cost {r['cost_units']:g} (re-checks {r['recheck_cost']:g})"
        )

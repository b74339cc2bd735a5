"""Harness-of-Harness (seed 002 §6): plan -> develop -> QA iterations on one project.

Bounded iteration of one project with fixed roles and a fixed run policy, on the engine: every
validation and decision is an engine step on the project's one `Recorder` (`on_engine`), which
pays every action through the budget and writes every event to the ledger. The developer is a
`Strategy`: one engine round proposes its change, applies it (protected paths checked), re-tests
it and decides (keep="resolved": the items' dev tests pass and no passing dev test breaks).
Candidate code runs only in labkit's validator. An iteration:

    plan     the planner reads the role view (the dev tests' evidence on the held candidate,
             QA's findings) and the items; files, closes, and picks the policy's work items
    develop  the developer proposes one change for them; it is validated and kept or rolled back
    status   the held candidate's status check (every dev test), free unless it changed
    freeze   the held candidate is frozen by digest
    QA       QA re-reads the snapshot by digest (same bytes), runs its checks, files findings as
             new or reopened items

After the last iteration the hidden benchmark scores each iteration's held candidate (one batch)
into the scorer's channel: SCORE events (role scorer, outside every role's view) and
`ProjectRun.hidden`, which only the reader's pages read. Nothing from it can flow back into the
loop. (A hidden step inside the loop would be an engine task with a hidden suite, whose DEFINE
event names the hidden suite's digest in the role view.)

Each engine step's case id names the iteration and the step (`shop/it3/develop`, `…/status`,
`…/qa`); the planner reads the status checks from the role view.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, TypeVar

from labkit.core import patch as patches
from labkit.core.errors import InvalidSetting
from labkit.core.types import Candidate, Decision, DecisionRecord, Verdict
from labkit.experiments.long_projects.items import WorkItems
from labkit.experiments.long_projects.on_engine import engine_step
from labkit.experiments.long_projects.project import Project, QaCheck
from labkit.experiments.long_projects.roles import (
    Developer,
    DeveloperParams,
    Prices,
    QaParams,
    SimulatedDeveloper,
    Snapshots,
    Work,
    dev_failures,
    role_view,
    write_checks,
)
from labkit.experiments.long_projects.run_record import HiddenScore, Iteration, Policy, ProjectRun
from labkit.grading.verdicts import Checked
from labkit.loop.engine.steps import Payment, Recorder
from labkit.loop.engine.trace import Task
from labkit.record.events import Kind, Role

if TYPE_CHECKING:
    from labkit.grading.verdicts import Checker
    from labkit.record.ledger import Ledger

__all__ = ["DEVELOPER", "PRICES", "HiddenScore", "Iteration", "Policy", "ProjectRun", "run_project"]

T = TypeVar("T")
DEVELOPER = DeveloperParams()  # the stated defaults
PRICES = Prices()


def step_id(project: Project, i: int, step: str) -> str:
    """The case id of iteration `i`'s engine step ("develop", "status", "qa")."""
    return f"{project.name}/it{i}/{step}"


def _planner_closes(items: WorkItems, project: Project, failing: set[str], i: int) -> None:
    for item in items.open_items():
        passes = not failing & set(project.requirement(item.id).dev_tests)
        if passes and (item.origin == "dev" or item.worked):
            items.close(item.id, i, "planner")


@dataclass(kw_only=True)
class _Run:
    project: Project
    rec: Recorder
    policy: Policy
    qa: QaParams
    developer: Developer
    prices: Prices
    checks: tuple[QaCheck, ...]
    status: Task  # every dev test, all required: the status check the planner reads
    items: WorkItems = field(default_factory=WorkItems)
    snapshots: Snapshots = field(default_factory=Snapshots)
    inputs: list[str] = field(default_factory=list)
    hidden: list[HiddenScore] = field(default_factory=list)
    held: list[tuple[int, Candidate, Verdict]] = field(default_factory=list)  # after each iteration (0: the start)

    def settle(self, i: int, candidate: Candidate) -> Verdict:
        """The held candidate's status check (every dev test): one engine step (step 2 only)."""
        task = replace(self.status, id=step_id(self.project, i, "status"), start=candidate, hidden=None)
        verdict = engine_step(self.rec, task).traces[task.id].start_verdict
        self.held.append((i, candidate, verdict))
        return verdict

    def score(self) -> None:
        """The sealed channel, after the iterations: each iteration's held candidate on the hidden
        benchmark (validated in one batch, never paid: the lab's scoring), written as the scorer's
        events and the reader's list. Nothing from it can flow back into the loop: the loop is over.
        A hidden run that timed out or raised an alarm is never cached: it counts as passing nothing."""
        checker, hidden = self.rec.checker, self.project.hidden
        checker.warm([(c, hidden) for _, c, _ in self.held])
        for i, c, visible in self.held:
            v = checker.lookup(c, hidden)
            if v is not None:
                self.rec.scored(self.status, i, c, Checked(v, True), visible, c.label)
            else:  # not kept by the cache: the scorer's event says it failed, with no results to show
                self.rec.log(
                    self.status,
                    i,
                    Role.SCORER,
                    Kind.SCORE,
                    detail={
                        "candidate": c.digest,
                        "correct": False,
                        "visible": visible.resolved,
                        "state": c.label,
                        "scored_on": "hidden",
                        "cached": False,
                    },
                )
            passed = set(v.fail_to_pass) if v is not None else set()
            failing = sorted({self.project.hidden_requirement[n] for n in hidden.required if n not in passed})
            self.hidden.append(HiddenScore(i, len(passed), len(hidden.required), tuple(failing)))

    def plan(self, i: int, held: Candidate) -> Work:
        view = role_view(self.rec.ledger, self.rec.run_id)
        failing = set(dev_failures(view, held.digest) or ())
        seen = json.dumps(
            {
                "held": held.digest,
                "failing_dev_tests": sorted(failing),
                "qa_findings": [e.evidence_value for e in view if e.kind == Kind.QA],
            },
            sort_keys=True,
        )
        self.inputs.append(seen)

        def choose() -> Work:
            for r in self.project.requirements:
                bad = tuple(sorted(failing & set(r.dev_tests)))
                if bad:
                    self.items.file(r.id, r.title, "dev", bad, i, "planner")
            _planner_closes(self.items, self.project, failing, i)
            return Work(i, tuple(self.items.open_items()[: self.policy.items_per_iteration]))

        work = self.call(Kind.PLAN, self.prices.planner_tokens, i, choose)
        t = self.items.tally(i)
        self.rec.log(
            self.status,
            i,
            Role.PLANNER,
            Kind.PLAN,
            inputs=seen,
            outputs=work.as_json(),
            usage=self.prices.usage(self.prices.planner_tokens),
            detail={
                "iteration": i,
                "items": [w.id for w in work.items],
                "added": t.added,
                "closed": t.closed,
                "reopened": t.reopened,
                "open": t.open,
            },
        )
        return work

    def call(self, kind: Kind, tokens: int, i: int, fn: Callable[[], T]) -> T:
        """A role's (simulated) model call, paid through the budget at its stated price."""
        return self.rec.pay(Payment(kind, self.prices.usage(tokens)), fn, i)

    def develop(
        self, i: int, held: Candidate, held_status: Verdict, work: Work
    ) -> tuple[Candidate, DecisionRecord, str]:
        """One engine round: the developer proposes one change for `work`, the engine decides it."""
        self.developer.work = work
        self.inputs.append(work.as_json())
        self.developer.choices = ()
        if not work.items:
            return held, DecisionRecord(Decision.INVESTIGATE, "nothing to develop", "idle"), ""
        failing = set(held_status.fail_to_fail)
        targets = [n for w in work.items for n in self.project.requirement(w.id).dev_tests]
        protect = [n for n in self.project.dev_tests if n not in failing and n not in targets]
        task = Task(id=step_id(self.project, i, "develop"), start=held, suite=self.project.dev_suite(targets, protect))
        (rnd,) = engine_step(self.rec, task, self.developer, rounds=1).traces[task.id].rounds
        tried = next((a.patched for a in rnd.attempts if a.patched is not None), None)
        diff = patches.make(held.files, tried.files).diff if tried is not None else ""
        if rnd.decision.decision is not Decision.KEEP:
            return held, rnd.decision, diff
        for w in work.items:
            self.items.worked_on(w.id)
        return rnd.kept, rnd.decision, diff

    def review(self, i: int, digest: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """QA on the frozen snapshot `digest`: the same bytes re-read, its checks run, findings filed."""
        candidate = self.snapshots.get(digest)
        self.inputs.append(json.dumps({"snapshot": digest, "checks": [c.nodeid for c in self.checks]}))
        self.call(Kind.QA, self.prices.qa_review_tokens, i, lambda: None)
        failing: tuple[str, ...] = ()
        if self.checks:  # one engine step: the snapshot validated on QA's checks
            task = Task(id=step_id(self.project, i, "qa"), start=candidate, suite=self.project.qa_suite(self.checks))
            failing = tuple(engine_step(self.rec, task).traces[task.id].start_verdict.fail_to_fail)
        by_req: dict[str, list[str]] = {}
        for c in self.checks:
            if c.nodeid in failing:
                by_req.setdefault(c.requirement, []).append(c.nodeid)
        filed = [
            self.items.file(r, self.project.requirement(r).title, "qa", tuple(ids), i, "qa")
            for r, ids in sorted(by_req.items())
        ]
        self.rec.log(
            self.status,
            i,
            Role.QA,
            Kind.QA,
            inputs=digest,
            evidence={"failing": list(failing)},
            usage=self.prices.usage(self.prices.qa_review_tokens),
            detail={
                "iteration": i,
                "snapshot": digest,
                "source": self.qa.source,
                "checks": len(self.checks),
                "findings": sorted(by_req),
                "added": filed.count("added"),
                "reopened": filed.count("reopened"),
            },
        )
        return failing, tuple(sorted(by_req))


def run_project(
    project: Project,
    checker: Checker,
    ledger: Ledger,
    *,
    policy: Policy,
    qa: QaParams,
    developer: DeveloperParams = DEVELOPER,
    prices: Prices = PRICES,
    seed: int = 0,
    iterations: int = 10,
    run_id: str = "",
    strategy: Developer | None = None,
) -> ProjectRun:
    """Run `policy` on `project` for up to `iterations` plan -> develop -> QA iterations.

    The developer is simulated with `developer`'s stated parameters unless a `strategy` is given
    (e.g. `model_developer.ModelDeveloper("labkit/smollm2", project)`); `developer` still states
    the blind spots a same-source QA shares."""
    from labkit.record.budget import Budget, limits
    from labkit.record.ledger import new_run_id

    if iterations < 1 or policy.items_per_iteration < 1 or policy.qa_every < 1:
        raise InvalidSetting("iterations, items_per_iteration and qa_every must be at least 1")
    run_id = run_id or new_run_id("long")
    budget = Budget(limits(), ledger=ledger, run_id=run_id)
    simulated = strategy is None or strategy.simulated
    rec = Recorder(
        run_id=run_id,
        ledger=ledger,
        checker=checker,
        budget=budget,
        validation_cost=prices.validation,
        simulated=simulated,
    )
    status = Task(
        id=project.name, start=project.start, suite=project.dev_suite(project.dev_tests, ()), hidden=project.hidden
    )
    dev = (
        strategy
        if strategy is not None
        else SimulatedDeveloper(project=project, params=developer, seed=seed, prices=prices)
    )
    run = _Run(
        project=project,
        rec=rec,
        policy=policy,
        qa=qa,
        developer=dev,
        prices=prices,
        checks=write_checks(project, qa, developer, seed),
        status=status,
    )
    rec.pay(Payment(Kind.QA, prices.usage(prices.qa_write_tokens)), lambda: None, 0)
    rec.log(
        status,
        0,
        Role.QA,
        Kind.QA,
        outputs=json.dumps([c.nodeid for c in run.checks]),
        usage=prices.usage(prices.qa_write_tokens),
        detail={"iteration": 0, "source": qa.source, "checks": len(run.checks)},
    )
    held = project.start
    held_status = run.settle(0, held)
    out: list[Iteration] = []
    for i in range(1, iterations + 1):
        work = run.plan(i, held)
        held, d, diff = run.develop(i, held, held_status, work)
        held_status = run.settle(i, held)  # free unless the held candidate changed: a repeat is not paid
        if d.decision is Decision.KEEP:
            _planner_closes(run.items, project, set(held_status.fail_to_fail), i)
        digest = run.snapshots.freeze(held)
        qa_ran = i % policy.qa_every == 0
        failing, findings = run.review(i, digest) if qa_ran else ((), ())
        out.append(
            Iteration(
                index=i,
                plan=tuple(w.id for w in work.items),
                variants=dev.choices,
                diff=diff,
                decision=d.decision.value,
                reason=d.reason,
                snapshot=digest,
                qa_ran=qa_ran,
                qa_failing=failing,
                qa_findings=findings,
                items=tuple(sorted(run.items.items.values(), key=lambda x: x.id)),
                tally=run.items.tally(i),
                usage=rec.usage,
            )
        )
        if not run.items.open_items() and qa_ran:
            break
    run.score()
    rec.log(
        status,
        len(out),
        Role.DECISION,
        Kind.STOP,
        detail={
            "decision": "stop",
            "rule": "iterations",
            "reason": f"{len(out)} iteration(s); {len(run.items.open_items())} item(s) open",
        },
    )
    return ProjectRun(
        run_id=run_id,
        policy=policy,
        qa=qa,
        developer=developer,
        seed=seed,
        qa_checks=run.checks,
        iterations=tuple(out),
        hidden=tuple(run.hidden),
        role_inputs=tuple(run.inputs),
    )

"""The engine's steps for one case: step 3 (propose) and step 4 (prepare), and what a strategy sees.

`propose` is step 3 (the strategy, with discriminating experiments first if it asks); `prepare`
is step 4 for each child (protected paths, size cap, apply); `situation_for` is what a strategy
may read. Ledger writes, payments and validation (steps 2 and 5) are the `Recorder`'s
(`labkit.loop.engine.recorder`, re-exported here: other rooms import it with the steps).

`propose` bills REFLECT at `REFLECT_UPPER` unless told otherwise; `prepare` is unpaid unless
given a `Payment` (a host that declares an "execute" cost).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

from labkit.core import patch as patches
from labkit.core.errors import ModelError, PatchError, PatchTooLarge
from labkit.core.types import Candidate, Decision, DecisionRecord, PatchSize, Usage, Verdict
from labkit.grading.verdicts import Checker, VerdictCache
from labkit.loop.engine.probe import Observation, observe
from labkit.loop.engine.recorder import (
    REFLECT,
    REFLECT_UPPER,
    Paid,
    Payment,
    Prices,
    Recorder,
    candidate_from_json,
    candidate_json,
)
from labkit.loop.engine.strategy import Child, Proposal, Situation, Strategy, Tried
from labkit.loop.engine.trace import Attempt, Task
from labkit.record.events import Kind, Role

if TYPE_CHECKING:
    from labkit.grading.validator import Validator

__all__ = [  # the Recorder's names are re-exported: the public surface imports them from here
    "REFLECT",
    "REFLECT_UPPER",
    "Paid",
    "Payment",
    "Prepared",
    "Prices",
    "Recorder",
    "candidate_from_json",
    "candidate_json",
    "checker_for",
    "detail_of",
    "prepare",
    "propose",
    "situation_for",
    "tried_of",
    "upper_of",
]


def propose(
    rec: Recorder,
    strategy: Strategy,
    situation: Situation,
    task: Task | None,
    max_experiments: int,
    *,
    payment: Payment = REFLECT,
    model_errors: Literal["record", "raise"] = "record",
) -> tuple[Proposal, tuple[Observation, ...]]:
    """Step 3: ask the strategy (observing first, up to `max_experiments` times, if it asks).

    `payment` bills each ask (default: REFLECT, the reply's own usage, capped at
    REFLECT_UPPER). A model error is recorded as an ERROR event and, by default, becomes
    this round's proposal failure; with `model_errors="raise"` it is re-raised after being
    recorded, so the caller can classify it (an INFRASTRUCTURE error may be retried)."""
    observations: list[Observation] = []
    rnd = situation.round
    while True:
        t0 = time.time()
        here = replace(situation, observations=tuple(observations))
        try:
            bill = payment if payment is not REFLECT else Payment(Kind.REFLECT, upper_of(strategy), REFLECT.measure)
            proposal = rec.pay(bill, partial(strategy.propose, here), rnd)
        except ModelError as exc:  # recorded, not fatal: the case holds this round
            rec.log(task, rnd, Role.REFLECTOR, Kind.ERROR, detail={"error": f"{type(exc).__name__}: {exc}"})
            if model_errors == "raise":
                raise
            proposal = Proposal(failure=f"model call failed: {type(exc).__name__}: {exc}")
        kind = Kind.IDLE if proposal.idle else Kind.REFLECT
        rec.log(
            task,
            rnd,
            Role.REFLECTOR,
            kind,
            inputs=situation.verdict.evidence.digest,
            outputs=proposal.raw or None,
            usage=proposal.usage,
            started=t0,
            evidence=proposal.record.as_dict() if proposal.record else None,
            detail={
                "strategy": strategy.name,
                "failure": proposal.failure,
                "children": len(proposal.children),
                "experiment": proposal.experiment.question if proposal.experiment else "",
                **(
                    {"prediction": list(proposal.experiment.prediction)}  # only when made: old ledgers unchanged
                    if proposal.experiment and proposal.experiment.prediction
                    else {}
                ),
                "state": situation.state,
                "note": proposal.note,
            },
        )
        if proposal.experiment is None or len(observations) >= max_experiments:
            return proposal, tuple(observations)
        obs = observe(situation.candidate, proposal.experiment)
        rec.log(
            task,
            rnd,
            Role.REFLECTOR,
            Kind.EXPERIMENT,
            inputs=proposal.experiment.probe,
            outputs=obs.output,
            usage=Usage(wall_seconds=obs.wall_seconds),
            detail={
                "question": proposal.experiment.question,
                "exit_code": obs.exit_code,
                "candidate": situation.candidate.digest,
            },
        )
        observations.append(obs)


@dataclass(frozen=True)
class Prepared:
    """Step 4 for one child: the patched candidate (or why there is none) and its size."""

    child: Child
    patched: Candidate | None
    size: PatchSize | None
    size_problem: str = ""
    refusal: DecisionRecord | None = None  # set when the child is decided without validation


def prepare(
    rec: Recorder,
    task: Task,
    rnd: int,
    current: Candidate,
    child: Child,
    *,
    payment: Payment | None = None,
    build: Callable[[Candidate], object] | None = None,
) -> Prepared:
    """Step 4: one reversible change. Protected paths are never the candidate's to edit.

    With a `payment` the whole step is one paid action (reserved before anything runs;
    charged also when the child is refused or `build` raises). `build`, if given, runs on
    the patched candidate inside the step (e.g. byte-compile it); what it raises is the
    candidate's failure and propagates to the caller."""
    if payment is not None:
        return rec.pay(payment, partial(prepare, rec, task, rnd, current, child, build=build), rnd)
    try:
        if child.target is not None:
            patch = patches.make(current.files, child.target.files, child.name)
            if not patch.diff:
                why = DecisionRecord(Decision.INVESTIGATE, "the proposal changes nothing", "no-change")
                return Prepared(child, None, None, refusal=why)
        else:
            assert child.patch is not None
            patch = child.patch
        protected = sorted(set(patches.touched(patch)) & set(task.suite.protected_paths))
        if protected:
            rec.log(
                task,
                rnd,
                Role.VALIDATOR,
                Kind.ALARM,
                inputs=patch.diff,
                evidence=[f"patch touches protected path {p}" for p in protected],
                detail={"quarantined": True},
            )
            why = DecisionRecord(
                Decision.STOP, f"integrity alarm: patch edits protected {', '.join(protected)}", "integrity"
            )
            return Prepared(child, None, None, refusal=why)
        size = patches.size(patch)
        problem = ""
        if task.patch_cap:
            try:
                patches.check_size(patch, **dict(task.patch_cap))
            except PatchTooLarge as exc:
                problem = str(exc)
        patched = child.target if child.target is not None else patches.apply(current, patch)
    except PatchError as exc:
        return Prepared(
            child, None, None, refusal=DecisionRecord(Decision.INVESTIGATE, f"patch does not apply: {exc}", "patch")
        )
    rec.log(
        task,
        rnd,
        Role.EXECUTOR,
        Kind.GENERATE,
        inputs=patch.diff,
        outputs=candidate_json(patched),
        detail={
            "candidate": patched.digest,
            "parent": current.digest,
            "files": size.files,
            "hunks": size.hunks,
            "lines": size.lines,
            "proposal": child.name,
            "source": child.source,
        },
    )
    if build is not None:
        build(patched)
    return Prepared(child, patched, size, problem)


def upper_of(strategy: Strategy) -> Usage:
    """What one proposal may cost at most: the strategy's own `upper` (several calls per
    proposal, e.g. a critic and a reviser), else one call of REFLECT_UPPER."""
    upper = getattr(strategy, "upper", None)
    return upper if isinstance(upper, Usage) else REFLECT_UPPER


def situation_for(
    rnd: int,
    task: Task,
    candidate: Candidate,
    verdict: Verdict,
    rejected: tuple[str, ...],
    state: str,
    attempts: Iterable[Attempt] = (),
    path: tuple[str, ...] = (),
) -> Situation:
    """What a strategy may read: the held candidate and its *visible* verdict, and last round's
    children with their decisions and visible verdicts — never hidden results."""
    tried = tuple(tried_of(a) for a in attempts)
    return Situation(
        round=rnd,
        candidate=candidate,
        verdict=verdict,
        observations=(),
        rejected=rejected,
        case=task.id,
        state=state,
        suite=task.suite,
        attempts=tried,
        path=path,
    )


def tried_of(a: Attempt) -> Tried:
    """An attempt as a strategy may see it (the visible retest only)."""
    v = a.retest
    failing = tuple(r.nodeid for r in v.evidence.failures) if v is not None else ()
    return Tried(
        a.child.name or a.child.source,
        a.decision.decision.value,
        a.decision.reason,
        v.resolved if v is not None else None,
        failing,
    )


def checker_for(validator: Validator | Checker | None, cache: VerdictCache | None) -> Checker:
    """The validator behind the one verdict cache (a Checker passes through)."""
    if isinstance(validator, Checker):
        return validator
    return Checker(validator, cache)


def detail_of(d: DecisionRecord) -> dict[str, Any]:
    return {"decision": d.decision.value, "reason": d.reason, "rule": d.rule}

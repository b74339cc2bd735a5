"""The reflection loop: six strictly ordered steps, four separate roles, one trace.

    (1) protected acceptance is fixed before anything runs   -> suite digest in every event
    (2) run the candidate, collect external failure evidence  -> validator
    (3) compress evidence into one falsifiable hypothesis     -> reflector (may observe first)
    (4) apply one reversible change                           -> patch (size-capped)
    (5) re-run failing + protective tests, SAME validator     -> validator.retest
    (6) keep / roll back / keep investigating / stop          -> decide + stop rules

Roles only see what they need: the validator gets a candidate and returns evidence, the
reflector gets evidence and a read-only candidate and returns a hypothesis plus a patch,
and the decision only reads verdicts. The loop owns the state; the trace records it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Protocol, TypeVar

from labkit.core import patch as patches
from labkit.core.errors import BudgetExhausted, PatchError, PatchTooLarge
from labkit.core.types import Candidate, Decision, DecisionRecord, Patch, PatchSize, Usage, Verdict
from labkit.loop.probe import Experiment, Observation, observe
from labkit.loop.reflection import ReflectionRecord

T = TypeVar("T")

if TYPE_CHECKING:
    from labkit.grading.acceptance import AcceptanceSuite
    from labkit.grading.validator import Validator
    from labkit.record.budget import Budget
    from labkit.record.ledger import Ledger


# ---------------------------------------------------------------------------- roles


@dataclass(frozen=True)
class Reflection:
    """A reflector's answer for one round: a record and a patch, a request to observe, or a failure."""

    record: ReflectionRecord | None = None
    patch: Patch | None = None
    experiment: Experiment | None = None
    failure: str = ""  # why this reply cannot drive the loop (not JSON, incomplete record, …)
    raw: str = ""  # the reply as received, for the ledger and the notebook
    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True)
class Situation:
    """Everything a reflector may read. It is a copy: nothing here edits the candidate."""

    round: int
    candidate: Candidate
    verdict: Verdict
    observations: tuple[Observation, ...] = ()
    rejected: tuple[str, ...] = ()  # hypotheses already tried and rolled back this run


class Reflector(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def simulated(self) -> bool:
        """True for scripted/simulated reflectors: label their output so wherever it is shown."""
        ...

    def reflect(self, situation: Situation) -> Reflection: ...


StopRule = Callable[[Sequence["Round"]], DecisionRecord | None]


# ---------------------------------------------------------------------------- trace


@dataclass(frozen=True)
class Round:
    """One pass through steps 2–6. `kept` is what enters the next round."""

    index: int
    candidate: Candidate
    verdict: Verdict
    reflection: Reflection
    observations: tuple[Observation, ...] = ()
    patched: Candidate | None = None
    patch_size: PatchSize | None = None
    retest: Verdict | None = None
    decision: DecisionRecord = DecisionRecord(Decision.INVESTIGATE, "")
    usage: Usage = field(default_factory=Usage)  # cumulative, as settled so far

    @property
    def kept(self) -> Candidate:
        if self.decision.decision is Decision.KEEP and self.patched is not None:
            return self.patched
        return self.candidate

    @property
    def kept_verdict(self) -> Verdict:
        if self.decision.decision is Decision.KEEP and self.retest is not None:
            return self.retest
        return self.verdict


@dataclass(frozen=True)
class Trace:
    run_id: str
    suite: str  # suite digest, fixed in step 1
    validator: str
    reflector: str
    simulated: bool
    start: Candidate
    start_verdict: Verdict
    rounds: tuple[Round, ...]
    stop: DecisionRecord

    @property
    def final(self) -> Candidate:
        return self.rounds[-1].kept if self.rounds else self.start

    @property
    def final_verdict(self) -> Verdict:
        return self.rounds[-1].kept_verdict if self.rounds else self.start_verdict


# ---------------------------------------------------------------------------- decisions


def assess(verdict: Verdict) -> DecisionRecord:
    """What the evidence on a candidate calls for before any patch."""
    if verdict.quarantined:
        return DecisionRecord(
            Decision.STOP, "integrity alarm: " + "; ".join(verdict.evidence.alarms), "integrity"
        )
    if verdict.resolved:
        return DecisionRecord(
            Decision.STOP,
            "resolved: all failing acceptance passes, protective tests intact",
            "resolved",
        )
    a, n = verdict.score("acceptance")
    return DecisionRecord(
        Decision.INVESTIGATE, f"failing acceptance {a}/{n}: reflect on the evidence"
    )


def decide(before: Verdict, after: Verdict, size_problem: str = "") -> DecisionRecord:
    """Keep or roll back a patched candidate, judged by the same suite and validator as `before`."""
    if (
        after.evidence.suite != before.evidence.suite
        or after.evidence.validator != before.evidence.validator
    ):
        # Validator.retest already refuses this; decide refuses too, so no caller can slip past.
        return DecisionRecord(
            Decision.STOP, "re-test used a different suite or validator", "integrity"
        )
    if after.quarantined:
        return DecisionRecord(
            Decision.STOP, "integrity alarm: " + "; ".join(after.evidence.alarms), "integrity"
        )
    broken = sorted(set(after.pass_to_fail) - set(before.pass_to_fail))
    if broken:
        p, n = after.score("protective")
        return DecisionRecord(
            Decision.ROLL_BACK,
            f"breaks protective tests ({p}/{n} pass): {', '.join(broken)}",
            "protective",
        )
    if size_problem:
        return DecisionRecord(
            Decision.ROLL_BACK, f"green or not, not attributable: {size_problem}", "patch-size"
        )
    fixed = len(after.fail_to_pass) - len(before.fail_to_pass)
    if after.resolved:
        return DecisionRecord(
            Decision.KEEP,
            "failing acceptance now passes and protective tests still pass",
            "resolved",
        )
    if fixed > 0:
        return DecisionRecord(
            Decision.KEEP, f"{fixed} more acceptance test(s) pass, none broken", "progress"
        )
    return DecisionRecord(
        Decision.ROLL_BACK,
        "no failing acceptance test changed: hypothesis not supported",
        "no-progress",
    )


# ---------------------------------------------------------------------------- the loop


@dataclass
class _Run:
    """Mutable bookkeeping for one run: ledger writes and budget charges in one place."""

    run_id: str
    suite: AcceptanceSuite
    validator: Validator
    ledger: Ledger | None
    budget: Budget | None
    validation_cost: float
    usage: Usage = field(default_factory=Usage)

    def log(
        self,
        rnd: int,
        role: str,
        kind: str,
        *,
        inputs: str | None = None,
        outputs: str | None = None,
        evidence: object = None,
        usage: Usage | None = None,
        started: float | None = None,
        detail: dict[str, object] | None = None,
    ) -> None:
        if self.ledger is None:
            return
        self.ledger.record(
            self.run_id,
            rnd,
            role,
            kind,
            inputs=inputs,
            outputs=outputs,
            evidence=evidence,
            usage=usage or Usage(),
            started_at=started,
            ended_at=time.time(),
            detail={"suite": self.suite.digest, **(detail or {})},
        )

    def charge(
        self, kind: str, fn: Callable[[], T], upper: Usage, measure: Callable[[T], Usage]
    ) -> T:
        """Run `fn` under the budget (reserve `upper`, settle `measure(result)`), if there is one."""
        if self.budget is None:
            out = fn()
            self.usage = self.usage + measure(out)
            return out
        from labkit.record.budget import Operation

        out = self.budget.paid(kind, Operation(fn, upper=upper, measure=measure))
        self.usage = self.usage + measure(out)
        return out

    def validate(self, rnd: int, candidate: Candidate, before: Verdict | None) -> Verdict:
        t0 = time.time()
        lim = self.validator.limits.wall_seconds

        def run() -> Verdict:
            if before is None:
                return self.validator.run(candidate, self.suite)
            return self.validator.retest(before, candidate, self.suite)

        verdict = self.charge(
            "verify",
            run,
            Usage(wall_seconds=lim + 30, cost_units=self.validation_cost),
            lambda v: Usage(wall_seconds=v.evidence.wall_seconds, cost_units=self.validation_cost),
        )
        self.log(
            rnd,
            "validator",
            "verify",
            inputs=_candidate_json(candidate),
            outputs=verdict.evidence.digest,
            evidence=verdict.report() | {"alarms": list(verdict.evidence.alarms)},
            usage=Usage(
                wall_seconds=verdict.evidence.wall_seconds, cost_units=self.validation_cost
            ),
            started=t0,
            detail={
                "candidate": candidate.digest,
                "label": candidate.label,
                "validator": self.validator.id,
                "resolved": verdict.resolved,
                "retest": before is not None,
            },
        )
        if verdict.quarantined:
            self.log(
                rnd,
                "validator",
                "alarm",
                inputs=_candidate_json(candidate),
                evidence=list(verdict.evidence.alarms),
                detail={"candidate": candidate.digest, "quarantined": True},
            )
        return verdict


def _candidate_json(c: Candidate) -> str:
    return json.dumps(
        {"label": c.label, "parent": c.parent, "files": dict(c.files)}, sort_keys=True
    )


def candidate_from_json(text: str) -> Candidate:
    data = json.loads(text)
    return Candidate(files=data["files"], label=data.get("label", ""), parent=data.get("parent"))


def resume_point(ledger: Ledger, run_id: str) -> tuple[Candidate, int] | None:
    """Where a recorded run left off: the candidate kept by its last decided round, and that round.

    Rounds are only complete once decided, so a run killed mid-round resumes at that round
    again. Returns None for a run the ledger has never seen.
    """
    events = ledger.events(run_id)
    decided = [e for e in events if e.kind == "decide"]
    started = [e for e in events if e.kind == "generate" and e.role == "executor" and e.round == 0]
    last = decided[-1] if decided else started[0] if started else None
    if last is None:
        return None
    return candidate_from_json(ledger.get(last.output_hash)), last.round


def run_loop(
    start: Candidate,
    suite: AcceptanceSuite,
    validator: Validator,
    reflector: Reflector,
    *,
    max_rounds: int = 5,
    max_experiments: int = 2,
    patch_cap: dict[str, int] | None = None,
    stop_rules: Sequence[StopRule] = (),
    ledger: Ledger | None = None,
    budget: Budget | None = None,
    run_id: str = "",
    validation_cost: float = 1.0,
    resume: bool = False,
) -> Trace:
    """Run the six steps until resolved, a stop rule fires, the budget runs out or `max_rounds`.

    `patch_cap` limits patch size, e.g. {"max_hunks": 2, "max_lines": 8}: a larger patch is
    validated (its evidence is still evidence) but rolled back as not attributable.
    With `resume=True` and a ledger that already holds `run_id`, the run continues from the
    candidate its last decided round kept (the returned trace holds the new rounds only).
    """
    run_id = run_id or f"run-{int(time.time() * 1000):x}"
    state = _Run(run_id, suite, validator, ledger, budget, validation_cost)
    done = 0
    point = resume_point(ledger, run_id) if resume and ledger is not None else None
    if point is not None:
        start, done = point
        state.log(
            done,
            "decision",
            "resume",
            outputs=_candidate_json(start),
            detail={"candidate": start.digest},
        )
    # Step 1: the acceptance is fixed before the first run; its digest is on every event.
    state.log(
        done,
        "decision",
        "define",
        outputs=suite.digest,
        evidence={
            "fail_to_pass": list(suite.fail_to_pass),
            "pass_to_pass": list(suite.pass_to_pass),
        },
        detail={"reflector": reflector.name, "simulated": reflector.simulated},
    )
    state.log(
        done,
        "executor",
        "generate",
        outputs=_candidate_json(start),
        detail={"candidate": start.digest, "label": start.label},
    )
    # Step 2 on the starting candidate.
    start_verdict = state.validate(done, start, None)
    rounds: list[Round] = []
    stop = assess(start_verdict)
    candidate, verdict = start, start_verdict
    rejected: list[str] = []

    try:
        for index in range(done + 1, max_rounds + 1):
            stop = assess(verdict)
            if stop.decision is Decision.STOP:
                break
            rnd = _one_round(
                state,
                index,
                candidate,
                verdict,
                reflector,
                tuple(rejected),
                max_experiments,
                patch_cap,
            )
            rounds.append(rnd)
            if rnd.decision.decision is Decision.ROLL_BACK and rnd.reflection.record is not None:
                rejected.append(rnd.reflection.record.hypothesis.cause)
            candidate, verdict = rnd.kept, rnd.kept_verdict
            if rnd.decision.decision is Decision.STOP:
                stop = rnd.decision
                break
            fired = next((d for rule in stop_rules if (d := rule(rounds)) is not None), None)
            if fired is not None:
                stop = fired
                break
        else:
            stop = assess(verdict)
            if stop.decision is not Decision.STOP:
                stop = DecisionRecord(
                    Decision.STOP, f"round cap reached ({max_rounds}); report unknowns", "round-cap"
                )
    except BudgetExhausted as exc:
        stop = DecisionRecord(Decision.STOP, f"budget exhausted: {exc}", "budget")

    state.log(
        len(rounds),
        "decision",
        "stop",
        outputs=_candidate_json(candidate),
        detail={
            "decision": stop.decision.value,
            "reason": stop.reason,
            "rule": stop.rule,
            "candidate": candidate.digest,
        },
    )
    return Trace(
        run_id,
        suite.digest,
        validator.id,
        reflector.name,
        reflector.simulated,
        start,
        start_verdict,
        tuple(rounds),
        stop,
    )


def _one_round(
    state: _Run,
    index: int,
    candidate: Candidate,
    verdict: Verdict,
    reflector: Reflector,
    rejected: tuple[str, ...],
    max_experiments: int,
    patch_cap: dict[str, int] | None,
) -> Round:
    # Step 3: reflect on the evidence; observe first if the reflector asks to.
    observations: list[Observation] = []
    while True:
        t0 = time.time()
        situation = Situation(index, candidate, verdict, tuple(observations), rejected)
        reflection = state.charge(
            "reflect",
            partial(reflector.reflect, situation),
            Usage(tokens=4096, calls=1, wall_seconds=120, cost_units=1),
            lambda r: r.usage,
        )
        state.log(
            index,
            "reflector",
            "reflect",
            inputs=verdict.evidence.digest,
            outputs=reflection.raw or None,
            usage=reflection.usage,
            started=t0,
            evidence=reflection.record.as_dict() if reflection.record else None,
            detail={
                "reflector": reflector.name,
                "simulated": reflector.simulated,
                "failure": reflection.failure,
                "experiment": reflection.experiment.question if reflection.experiment else "",
            },
        )
        if reflection.experiment is None or len(observations) >= max_experiments:
            break
        obs = observe(candidate, reflection.experiment)
        state.log(
            index,
            "reflector",
            "experiment",
            inputs=reflection.experiment.probe,
            outputs=obs.output,
            usage=Usage(wall_seconds=obs.wall_seconds),
            detail={
                "question": reflection.experiment.question,
                "exit_code": obs.exit_code,
                "candidate": candidate.digest,
            },
        )
        observations.append(obs)

    def finish(
        decision: DecisionRecord,
        patched: Candidate | None = None,
        patch_size: PatchSize | None = None,
        retest: Verdict | None = None,
    ) -> Round:
        rnd = Round(
            index,
            candidate,
            verdict,
            reflection,
            tuple(observations),
            patched,
            patch_size,
            retest,
            decision,
            state.usage,
        )
        state.log(
            index,
            "decision",
            "decide",
            outputs=_candidate_json(rnd.kept),
            detail={
                "decision": decision.decision.value,
                "reason": decision.reason,
                "rule": decision.rule,
                "candidate": rnd.kept.digest,
                "cost_so_far": state.usage.cost_units,
            },
        )
        return rnd

    if reflection.failure or reflection.patch is None:
        why = reflection.failure or "reflector gave no patch"
        return finish(
            DecisionRecord(Decision.INVESTIGATE, f"reflection unusable: {why}", "reflection")
        )

    # Step 4: one reversible change. Protected paths are never the candidate's to edit.
    patch = reflection.patch
    try:
        touched = patches.touched(patch)
        protected = sorted(set(touched) & set(state.suite.protected_paths))
        if protected:
            state.log(
                index,
                "validator",
                "alarm",
                inputs=patch.diff,
                evidence=[f"patch touches protected path {p}" for p in protected],
                detail={"quarantined": True},
            )
            return finish(
                DecisionRecord(
                    Decision.STOP,
                    f"integrity alarm: patch edits protected {', '.join(protected)}",
                    "integrity",
                )
            )
        size = patches.size(patch)
        size_problem = ""
        if patch_cap:
            try:
                patches.check_size(patch, **patch_cap)
            except PatchTooLarge as exc:
                size_problem = str(exc)
        patched = patches.apply(candidate, patch)
    except PatchError as exc:
        return finish(DecisionRecord(Decision.INVESTIGATE, f"patch does not apply: {exc}", "patch"))
    state.log(
        index,
        "executor",
        "generate",
        inputs=patch.diff,
        outputs=_candidate_json(patched),
        detail={
            "candidate": patched.digest,
            "parent": candidate.digest,
            "files": size.files,
            "hunks": size.hunks,
            "lines": size.lines,
        },
    )

    # Step 5: same suite, same validator — retest refuses anything else.
    retest = state.validate(index, patched, verdict)
    # Step 6.
    decision = decide(verdict, retest, size_problem)
    return finish(decision, patched, size, retest)


def run_sequence(
    candidate: Candidate,
    steps: Sequence[Patch],
    suite: AcceptanceSuite,
    validator: Validator,
    *,
    ledger: Ledger | None = None,
    run_id: str = "sequence",
) -> list[tuple[Patch, Verdict]]:
    """Dependent changes as a checkpointed sequence: apply, validate and record each step in turn.

    Stops at the first step that does not apply or breaks a protective test, so the
    evidence says which step caused what.
    """
    state = _Run(run_id, suite, validator, ledger, None, 1.0)
    verdict = state.validate(0, candidate, None)
    out: list[tuple[Patch, Verdict]] = []
    for i, step in enumerate(steps, start=1):
        candidate = patches.apply(candidate, step)
        after = state.validate(i, candidate, verdict)
        out.append((step, after))
        state.log(
            i, "decision", "checkpoint", inputs=step.diff, detail={"resolved": after.resolved}
        )
        if after.pass_to_fail or after.quarantined:
            break
        verdict = after
    return out

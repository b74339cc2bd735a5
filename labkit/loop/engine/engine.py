"""The engine: six strictly ordered steps, for one case or a suite of cases, one trace each.

    (1) protected acceptance is fixed before anything runs   -> suite digest in every event
    (2) run the candidate, collect external failure evidence  -> validator (one verdict cache)
    (3) compress evidence into a proposal                     -> a Strategy (may observe first)
    (4) apply each proposed change                            -> patch (size-capped)
    (5) re-run failing + protective tests, SAME validator     -> validator
    (6) keep / roll back / keep investigating / stop          -> decide + stop rules

Roles only see what they need: the validator gets a candidate and returns evidence, the
strategy gets *visible* evidence and a read-only candidate and returns children, the
decision only reads verdicts. A case's hidden tests score the held candidate after every
round (for accounting) and never reach a strategy. Cases run in lockstep rounds; after each
round per-case rules may stop a case and run rules (reading per-round counts rebuilt from
the ledger) may stop the run. Every ending records a stop with its reason.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

from labkit.core.errors import InvalidSetting, RunInterrupted
from labkit.core.types import Candidate
from labkit.grading.verdicts import Checker, VerdictCache
from labkit.loop.engine import resume as resuming
from labkit.loop.engine.acting import Acting, ActionStrategy, act_run
from labkit.loop.engine.decide import KEEP_MODES, Keep, assess, decide
from labkit.loop.engine.expand import EXPANSIONS, Confirmation, Expand, FrontierLimits
from labkit.loop.engine.failure_policy import Failures
from labkit.loop.engine.recorder import Prices, Recorder, candidate_from_json
from labkit.loop.engine.runner import Runner
from labkit.loop.engine.steps import checker_for
from labkit.loop.engine.stopping import Rule
from labkit.loop.engine.strategy import Proposal, Situation, Strategy
from labkit.loop.engine.trace import EngineRun, Round, Task, Trace

if TYPE_CHECKING:
    from labkit.grading.acceptance import AcceptanceSuite
    from labkit.grading.validator import Validator
    from labkit.record.budget import Budget
    from labkit.record.ledger import Ledger

__all__ = [
    "EngineRun", "Proposal", "Round", "Situation", "Task", "Trace",
    "as_strategy", "assess", "candidate_from_json", "decide", "resume_point", "run", "run_loop",
]  # fmt: skip

resume_point = resuming.resume_point


def as_strategy(obj: Any) -> Strategy:
    if hasattr(obj, "propose"):
        return obj
    if hasattr(obj, "reflect"):
        return _Reflecting(obj)
    raise TypeError(f"{type(obj).__name__} is not a Strategy: it has no propose(situation)")


@dataclass(frozen=True)
class _Reflecting:
    """A reflector (reflect(situation) -> Proposal) used as a strategy."""

    reflector: Any

    @property
    def name(self) -> str:
        return str(self.reflector.name)

    @property
    def simulated(self) -> bool:
        return bool(self.reflector.simulated)

    def propose(self, situation: Situation) -> Proposal:
        return self.reflector.reflect(situation)


def run(
    tasks: Sequence[Task],
    strategy: Strategy | Any,
    validator: Validator | Checker | None = None,
    *,
    rounds: int = 5,
    rules: Sequence[Rule] = (),
    case_rules: Sequence[Rule] = (),
    keep: Keep = "progress",
    stop_at_green: bool = True,
    observe: Literal["hidden", "visible"] = "hidden",
    recheck: int = 0,
    max_experiments: int = 2,
    ledger: Ledger | None = None,
    budget: Budget | None = None,
    cache: VerdictCache | None = None,
    run_id: str = "",
    validation_cost: float = 1.0,
    resume: bool = False,
    workers: int = 1,
    on_alarm: Literal["continue", "stop"] = "continue",
    expand: Expand = "hold",
    limits: FrontierLimits | None = None,
    confirm: Confirmation | None = None,
    prices: Prices | None = None,
    failures: Failures | None = None,
    build: Callable[[Candidate], object] | None = None,
    act: Acting | None = None,
) -> EngineRun:
    """Run every task through up to `rounds` rounds of the six steps; record everything.

    `keep` is the decide mode (see `labkit.loop.engine.decide`). With `stop_at_green` a case stops
    once its visible suite passes; without it, passing cases are still offered to the
    strategy (how over-editing shows). `rules` read the whole run's history (per-round
    counts from the ledger: hidden scoring, or visible with observe="visible"); `case_rules`
    one case's. A run rule whose outcome is roll back restores the previous round's states.
    `recheck` re-runs each start uncached that many times (an unstable validator shows).
    With `resume=True` the run continues from what `ledger` holds for `run_id`; a run that
    already stopped is returned as recorded. Without it, a `run_id` that `ledger` already holds
    events for is refused (RunIdInUse), and while another live process writes `run_id`, both
    ways are refused (RunLeaseHeld); a resume takes over the lease of an owner that died.
    Errors other than an exhausted budget record a stop and raise RunInterrupted carrying the
    run so far. A proposal whose verdict raises an integrity alarm is quarantined and recorded;
    `on_alarm="continue"` (the default) rolls it back and goes on with the next proposal,
    `"stop"` ends its case there.

    `expand` is the expansion policy (labkit.loop.engine.expand): "hold" (one held state per
    case, the best kept child replaces it) or a frontier of kept states per case ("breadth",
    "best"; one expansion per case per round, `limits` bound depth and children kept). With
    `confirm`, the run ends by choosing each case's winner among its green states by the
    preregistered rule and confirming it once on the case's sealed final set (EngineRun.winners).
    `prices` bills each proposal and each step 4 at declared costs (default: a proposal's own
    usage, step 4 unpaid); every validation costs `validation_cost`. `build` runs on each executed
    candidate inside step 4 (e.g. byte-compile it: what it raises is the child's failure). With
    `failures` (labkit.loop.engine.failure_policy) a failed step is classified and its class obeyed:
    INFRASTRUCTURE retried under one billed rule, the child or expansion ended, or the case stopped
    or quarantined (a quarantined case's winner is not confirmed); without it a model error is the
    round's proposal failure and any other error interrupts the run.

    With `act` (labkit.loop.engine.acting) the one task is a task of external effects (a tool
    task, `acting.command_task`): `strategy` is an `acting.ActionStrategy`, each round is one paid,
    uncached action, its observation, the actor's proposal and the decision; `rounds` caps the
    actions and `rules` read them. The run's traces are empty: an action is not a candidate.
    """
    if on_alarm not in ("continue", "stop"):
        raise InvalidSetting(f'on_alarm must be "continue" or "stop", got {on_alarm!r}')
    if rounds < 0:
        raise InvalidSetting(f"rounds must be >= 0, got {rounds}")
    if not tasks:
        raise InvalidSetting("run needs at least one task")
    if len({t.id for t in tasks}) != len(tasks):
        raise InvalidSetting("task ids must be unique")
    if keep not in KEEP_MODES:
        raise InvalidSetting(f"keep must be one of {KEEP_MODES}, got {keep!r}")
    if expand not in EXPANSIONS:
        raise InvalidSetting(f"expand must be one of {EXPANSIONS}, got {expand!r}")
    if expand != "hold" and resume:
        raise InvalidSetting("resume=True continues hold-one runs only: a frontier is not rebuilt from the ledger")
    if confirm is not None and any(t.hidden is None for t in tasks):
        raise InvalidSetting("confirm needs every task to carry its sealed final set (Task.hidden)")
    if keep == "severity" and any(t.checks is None for t in tasks):
        raise InvalidSetting('keep="severity" needs every task to carry its checks (Task.checks: versions, severities)')
    from labkit.record.lease import acquire
    from labkit.record.ledger import Ledger, new_run_id

    ledger = ledger if ledger is not None else Ledger()
    run_id = run_id or new_run_id("run")
    if act is not None:
        if len(tasks) != 1 or resume or expand != "hold":
            raise InvalidSetting("act runs one task of external effects, from its start (no resume, no frontier)")
        rec = Recorder(
            run_id=run_id,
            ledger=ledger,
            checker=checker_for(validator, cache),
            budget=budget,
            validation_cost=0.0,
            simulated=act.simulated,
        )
        with acquire(ledger, run_id, resume=False):
            return act_run(rec, tasks[0], cast(ActionStrategy, strategy), act, max_actions=rounds, rules=rules)
    strat = as_strategy(strategy)
    rec = Recorder(
        run_id=run_id,
        ledger=ledger,
        checker=checker_for(validator, cache),
        budget=budget,
        validation_cost=validation_cost,
        simulated=strat.simulated,
    )
    engine = Runner(
        rec=rec,
        tasks=tuple(tasks),
        strategy=strat,
        rounds=rounds,
        rules=tuple(rules),
        case_rules=tuple(case_rules),
        keep=keep,
        stop_at_green=stop_at_green,
        observe=observe,
        recheck=recheck,
        max_experiments=max_experiments,
        workers=workers,
        on_alarm=on_alarm,
        expand=expand,
        limits=limits or FrontierLimits(),
        confirmation=confirm,
        prices=prices or Prices(),
        failures=failures,
        build=build,
    )
    recorded = resuming.read(ledger, run_id) if resume else None
    if recorded is not None and recorded.stop is not None:
        return engine.as_recorded(recorded)
    # One writer per run id: refused if the id has events (unless resuming) or a live owner.
    with acquire(ledger, run_id, resume=resume):
        if resume:  # read again under the lease: a dead owner may have recorded more meanwhile
            recorded = resuming.read(ledger, run_id)
            if recorded is not None and recorded.stop is not None:
                return engine.as_recorded(recorded)
        return engine.go(recorded)


# ---------------------------------------------------------------------------- one case


def run_loop(
    start: Candidate,
    suite: AcceptanceSuite,
    validator: Validator,
    reflector: Strategy | Any,
    *,
    max_rounds: int = 5,
    max_experiments: int = 2,
    patch_cap: dict[str, int] | None = None,
    stop_rules: Sequence[Rule] = (),
    ledger: Ledger | None = None,
    budget: Budget | None = None,
    run_id: str = "",
    validation_cost: float = 1.0,
    resume: bool = False,
    on_alarm: Literal["continue", "stop"] = "continue",
) -> Trace:
    """One case through the engine until resolved, a stop rule fires, the budget runs out or
    `max_rounds`. `patch_cap` limits patch size, e.g. {"max_hunks": 2, "max_lines": 8}: a larger
    patch is validated but rolled back as not attributable. With `resume=True` the run continues
    from `ledger` (the returned trace holds the new rounds only; a finished run returns as recorded).
    """
    from labkit.record.ledger import new_run_id

    task = Task(id=suite.name, start=start, suite=suite, patch_cap=dict(patch_cap or {}))
    try:
        out = run(
            [task],
            reflector,
            validator,
            rounds=max_rounds,
            rules=stop_rules,
            max_experiments=max_experiments,
            ledger=ledger,
            budget=budget,
            run_id=run_id or new_run_id("run"),
            validation_cost=validation_cost,
            resume=resume,
            on_alarm=on_alarm,
        )
    except RunInterrupted:
        raise
    if task.id not in out.traces:  # e.g. the budget could not pay for the first validation
        raise RunInterrupted(f"run {out.run_id} ended before its start was validated: {out.stop.reason}", out)
    return out.traces[task.id]

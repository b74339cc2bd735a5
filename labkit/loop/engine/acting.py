"""The engine's round for a task of external effects: act, observe, propose, decide (a tool task).

`engine.run(tasks, actor, act=Acting(...))` runs one task whose candidate is a command. An action
is not a candidate to validate: running `cp` twice is two effects, both paid, so the step that
"runs the candidate" is the action itself — paid through the budget under `Acting.payment`, never
served from the verdict cache, its failure classified by `Acting.classify` (the failure policy's
classifier) and recorded as one TOOL event (the observation). Then the steps, in order:

    (1) the acceptance is fixed first: the task's suite ("the command succeeds")  -> DEFINE
    (2) act: run the held command, classify its failure                        -> TOOL (paid)
    (3) the actor proposes what comes next (a command, escalate, or stop)      -> REFLECT
        `Acting.admit` may refuse the proposal (e.g. a reflection not bound to the recorded action)
    (6) decide: done (the action succeeded), escalate, the actor stops, a stop rule fires, or
        investigate (act on the proposed command next)                          -> DECIDE
    the run's end                                                               -> (ESCALATE), STOP

Steps 4 and 5 (patch, re-test) have no meaning here: the next command replaces the held one.
The stop rules read the actions as the engine's rules read rounds (action n is round n - 1, its
outcome (class, artifact, output) one evidence key): `stopping.NoNewEvidence(k)` stops after k
actions in a row that added nothing new. A refused proposal raises (nothing after it is
recorded); an exhausted budget ends the run with the rule "budget".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from labkit.core.error_classes import ErrorClass
from labkit.core.errors import BudgetExhausted
from labkit.core.types import Candidate, Decision, DecisionRecord, digest
from labkit.loop.engine.failure_policy import Classify
from labkit.loop.engine.recorder import Payment, Recorder, candidate_json
from labkit.loop.engine.stopping import History, Rule, Step, StopRecord, check
from labkit.loop.engine.trace import EngineRun, Task
from labkit.record.events import Kind, Role

if TYPE_CHECKING:
    from labkit.record.ledger import Ledger

__all__ = ["COMMAND", "Acting", "ActionStrategy", "Observed", "Turn", "act_run", "command_task", "evidence_key"]

COMMAND = "command"  # a tool task's candidate holds its command under this name
# the engine's own endings of an act run, as decision rules (a fired stop Rule keeps its own name)
DONE, ESCALATE, ACTOR_STOP, BUDGET, MAX_ACTIONS = "done", "escalate", "actor-stop", "budget", "max-actions"


@dataclass(frozen=True, kw_only=True)
class Observed:
    """What the engine saw of one action (what an actor is given)."""

    action: int
    command: str
    ok: bool
    output: str  # stdout, or the error message
    error_class: ErrorClass | None
    artifact: str


def evidence_key(o: Observed) -> str:
    """An action's outcome as one evidence key (what `stopping.NoNewEvidence` counts as new)."""
    return digest(f"{o.error_class or ''}\0{o.artifact}\0{o.output}")


@dataclass(frozen=True)
class Turn:
    """An actor's proposal: the next command, escalate, or stop (neither)."""

    command: str = ""
    escalate: bool = False
    reason: str = ""  # why it escalates (the ESCALATE event's reason)
    record: Mapping[str, object] = field(default_factory=dict)  # the proposal's REFLECT detail
    said: Any = None  # the actor's own answer, for `Acting.admit` to judge


class ActionStrategy(Protocol):
    """Reads the last action's outcome (and every one before) and proposes what comes next."""

    @property
    def name(self) -> str: ...

    def propose(self, seen: Observed, history: tuple[Observed, ...]) -> Turn: ...


@dataclass(frozen=True, kw_only=True)
class Acting:
    """`engine.run`'s configuration for a task of external effects."""

    tool: Callable[[str], str]  # runs a command; raises on failure
    artifact_of: Callable[[str], str]  # what a command touches
    classify: Classify  # (exception, source) -> its error class (the failure policy's classifier)
    payment: Payment  # what one action costs, under its budget kind
    unit: str  # the experimental unit the actions belong to
    admit: Callable[[Turn, Ledger, str], None] | None = None  # raises to refuse a recorded proposal
    simulated: bool = False


def command_task(unit: str, first: str) -> Task:
    """The task of a tool run: the first command is its start, its acceptance is "a command succeeds"."""
    from labkit.grading.acceptance import AcceptanceSuite

    text = "def test_command_succeeds():\n    pass  # observed by the engine: the action raised nothing\n"
    suite = AcceptanceSuite(
        name=f"tool:{unit}",
        tests={"test_tool.py": text},
        fail_to_pass=("test_tool.py::test_command_succeeds",),
        pass_to_pass=(),
    )
    return Task(id=unit, start=Candidate({COMMAND: first}, label="action 1"), suite=suite, start_state="action 1")


def act_run(
    rec: Recorder, task: Task, actor: ActionStrategy, act: Acting, *, max_actions: int, rules: Sequence[Rule]
) -> EngineRun:
    """Act until an action succeeds, the actor escalates or stops, a rule fires, the budget or `max_actions` ends it."""
    rec.log(
        None,
        0,
        Role.EXPERIMENT,
        Kind.START,
        detail={
            "strategy": actor.name,
            "cases": [task.id],
            "rounds": max_actions,
            "keep": "always",
            "observe": "visible",
            "recheck": 0,
            "rules": [getattr(r, "name", type(r).__name__) for r in rules],
            "case_rules": [],
        },
    )
    rec.log(
        task,
        0,
        Role.DECISION,
        Kind.DEFINE,
        outputs=task.suite.digest,
        evidence={"fail_to_pass": list(task.suite.fail_to_pass), "pass_to_pass": []},
        detail={"strategy": actor.name, "hidden": ""},
    )
    history: list[Observed] = []
    steps: list[Step] = []
    stops: list[StopRecord] = []
    command = str(task.start.files[COMMAND])
    end = DecisionRecord(Decision.STOP, f"{max_actions} actions taken", MAX_ACTIONS)
    turn: Turn | None = None
    for n in range(1, max_actions + 1):
        try:  # step 2: the action, paid; a failure is evidence, classified
            out, cls = rec.pay(act.payment, partial(act.tool, command), n), None
        except BudgetExhausted as exc:
            end = DecisionRecord(Decision.STOP, f"budget exhausted: {exc}", BUDGET)
            break
        except Exception as exc:  # noqa: BLE001 - the action's failure, classified by the control plane
            out, cls = str(exc), act.classify(exc, "tool")
        obs = Observed(
            action=n,
            command=command,
            ok=cls is None,
            output=out,
            error_class=cls.error_class if cls else None,
            artifact=act.artifact_of(command),
        )
        history.append(obs)
        steps.append(Step(case=task.id, round=n - 1, state=digest(command), failures=frozenset({evidence_key(obs)})))
        rec.log(
            None,
            n,
            Role.TOOL,
            Kind.TOOL,
            detail={
                "unit": act.unit,
                "action": n,
                "command": command,
                "ok": obs.ok,
                "artifact": obs.artifact,
                "error_class": obs.error_class.value if obs.error_class else "",
                "reason": obs.output,
            },
        )
        if obs.ok:
            end = _decided(rec, task, n, command, DecisionRecord(Decision.STOP, f"action {n} succeeded", DONE))
            break
        turn = actor.propose(obs, tuple(history))  # step 3
        rec.log(None, n, Role.TOOL_REFLECTOR, Kind.REFLECT, detail={"unit": act.unit, **turn.record})
        if act.admit is not None:
            act.admit(turn, rec.ledger, rec.run_id)
        if turn.escalate:
            end = _decided(
                rec, task, n, command, DecisionRecord(Decision.STOP, f"escalated after action {n}", ESCALATE)
            )
            break
        if not turn.command:
            end = _decided(
                rec, task, n, command, DecisionRecord(Decision.STOP, f"the actor stopped after action {n}", ACTOR_STOP)
            )
            break
        fired = check(rules, History(steps=tuple(steps)))
        if fired is not None:
            stops.append(StopRecord(fired.decision, fired.reason, fired.rule, fired.outcome, ""))
            end = _decided(rec, task, n, command, DecisionRecord(Decision.STOP, fired.reason, fired.rule))
            break
        _decided(
            rec, task, n, turn.command, DecisionRecord(Decision.INVESTIGATE, f"act on: {turn.command}", "next-action")
        )
        command = turn.command
    if end.rule == ESCALATE and turn is not None:
        rec.log(
            None,
            len(history),
            Role.HUMAN,
            Kind.ESCALATE,
            detail={
                "unit": act.unit,
                "action": len(history),
                "error_class": history[-1].error_class.value if history[-1].error_class else "",
                "reason": turn.reason,
            },
        )
    status = "success" if end.rule == DONE else "incomplete"
    rec.log(
        None,
        len(history),
        Role.CONTROL,
        Kind.STOP,
        detail={
            "unit": act.unit,
            "status": status,
            "reason": _REASONS.get(end.rule, "no_progress"),
            **({"rule": stops[-1].rule} if stops else {}),
        },
    )
    final = {task.id: f"action {len(history)}"}
    return EngineRun(
        run_id=rec.run_id,
        ledger=rec.ledger,
        tasks=(task,),
        traces={},
        rounds_run=len(history),
        stops=tuple(stops),
        stop=end,
        simulated=act.simulated,
        strategy=actor.name,
        final=final,
    )


# the STOP event's reason for each ending (a fired stop rule: "no_progress"), as tool runs always recorded it
_REASONS = {
    DONE: "done",
    ESCALATE: "escalated",
    ACTOR_STOP: "stopped",
    BUDGET: "budget_exhausted",
    MAX_ACTIONS: "max_actions",
}


def _decided(rec: Recorder, task: Task, n: int, command: str, d: DecisionRecord) -> DecisionRecord:
    """Step 6's record: what the engine decided after action `n` (the held command is the next one)."""
    held = Candidate({COMMAND: command}, label=f"action {n + 1 if d.decision is Decision.INVESTIGATE else n}")
    rec.log(
        task,
        n,
        Role.DECISION,
        Kind.DECIDE,
        outputs=candidate_json(held),
        detail={
            "decision": d.decision.value,
            "reason": d.reason,
            "rule": d.rule,
            "candidate": held.digest,
            "proposal": held.label,
            "cost_so_far": rec.usage.cost_units,
        },
    )
    return d

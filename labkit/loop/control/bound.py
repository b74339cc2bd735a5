"""Observation-bound reflection over numbered tool actions (seed 002 §2).

A reflection may drive the next action only if it is bound to what was observed: it cites
the **action number**, the **error class** the control plane assigned to that action's
failure, the **artifact** the action touched, and the **explanations not yet ruled out**,
written as observation -> contributing hypothesis -> next trial. `check_bound` compares the
citation with the ledger's TOOL event: a reflection citing another class than the one
recorded, or another artifact, is rejected (InvalidRecord). The chosen next step must be
one the class grants (`core.error_classes`): under POLICY_DENIED only an authorisation
change or stop — here, escalation to a human.

`run_tool_task` is the controller: every action is numbered, paid through the budget,
classified and recorded (through the engine's `Recorder`); then the reflector says what comes
next (a command, or escalate, or stop), and the engine's stop rules read the actions so far.
It also counts *new evidence*: an outcome (class, artifact, reason) not seen before.

Why this is not `engine.run`: an action is not a candidate. The engine validates a candidate
(files) against a protected suite through a verdict cache, where a repeat is free and served
from the cache; a tool action is an external effect, classified by the control plane (an error
class, not test outcomes), and running `cp` twice is two effects, both paid. So the controller
keeps its own turn-taking and borrows the engine's recorder, payment and stop rules.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Protocol

from labkit.core.error_classes import Action, ErrorClass, permits
from labkit.core.errors import BudgetExhausted, InvalidRecord, PermissionRefused
from labkit.core.types import Usage, digest
from labkit.grading.verdicts import Checker
from labkit.loop.control.classify import classify
from labkit.loop.engine.steps import Payment, Recorder
from labkit.loop.engine.stopping import History, Rule, Step, check, new_evidence
from labkit.record.events import Kind, Role

if TYPE_CHECKING:
    from labkit.record.budget import Budget
    from labkit.record.ledger import Ledger

__all__ = ["BoundReflection", "Next", "Observed", "ToolReflector", "ToolRun", "check_bound", "run_tool_task"]


@dataclass(frozen=True)
class Observed:
    """What the controller saw of one action (what a reflector is given)."""

    action: int
    command: str
    ok: bool
    output: str  # stdout, or the error message
    error_class: ErrorClass | None
    artifact: str


@dataclass(frozen=True)
class BoundReflection:
    action: int
    error_class: ErrorClass
    artifact: str
    open: tuple[str, ...]  # explanations not yet ruled out
    observation: str
    hypothesis: str  # the contributing hypothesis
    next_trial: str


@dataclass(frozen=True)
class Next:
    """The reflector's answer: a next command, escalate, or stop; with its reflection."""

    command: str = ""
    escalate: bool = False
    reflection: BoundReflection | None = None
    text: str = ""  # an unbound reflection is just text


class ToolReflector(Protocol):
    """Reads the last action's outcome (and every one before) and says what comes next."""

    name: str

    def reflect(self, seen: Observed, history: tuple[Observed, ...]) -> Next: ...


@dataclass(frozen=True)
class ToolRun:
    run_id: str
    unit: str
    reflector: str
    actions: int
    spent: float  # cost units charged by the budget
    new_evidence: int  # outcomes after the first that added something not seen before
    outcome: str  # done | escalated | stopped | budget_exhausted | max_actions
    history: tuple[Observed, ...]


def check_bound(r: BoundReflection | None, ledger: Ledger, run_id: str) -> BoundReflection:
    """The reflection, if its citation matches the recorded action; else InvalidRecord."""
    if r is None:
        raise InvalidRecord(["an unbound reflection (no action, class, artifact) cannot drive an action"])
    events = [e for e in ledger.events(run_id) if e.kind == Kind.TOOL and e.detail.get("action") == r.action]
    if not events:
        raise InvalidRecord([f"the reflection cites action {r.action}, which {run_id} never recorded"])
    d = events[-1].detail
    if str(d.get("error_class", "")) != r.error_class.value:
        raise InvalidRecord([f"action {r.action} was classified {d.get('error_class') or 'success'}, "
                             f"the reflection says {r.error_class.value}"])  # fmt: skip
    if str(d.get("artifact", "")) != r.artifact:
        raise InvalidRecord([f"action {r.action} touched {d.get('artifact')!r}, the reflection cites {r.artifact!r}"])
    missing = [n for n in ("observation", "hypothesis", "next_trial") if not getattr(r, n).strip()]
    if missing or not r.open:
        raise InvalidRecord([f"the reflection lacks {', '.join(missing or ['open explanations'])}"])
    return r


def run_tool_task(
    tool: Callable[[str], str],
    artifact_of: Callable[[str], str],
    reflector: ToolReflector,
    first: str,
    *,
    budget: Budget,
    ledger: Ledger,
    run_id: str,
    unit: str,
    cost: float = 1.0,
    max_actions: int = 20,
    require_bound: bool = False,
    rules: Sequence[Rule] = (),
) -> ToolRun:
    """Run commands until one succeeds, the reflector escalates or stops, a stop rule fires, the
    budget or `max_actions` ends it.

    Every action is paid and recorded through the engine's `Recorder` (one writer, one payer).
    After each action the `rules` read its history as the engine's stop rules do — action n is
    step n − 1, its outcome (class, artifact, reason) one evidence key — so
    `stopping.NoNewEvidence(k)` stops the run ("no_progress") after k actions in a row that
    added no new evidence. With `require_bound` an unbound reflection cannot drive the next
    action (InvalidRecord). The run's end is a STOP event of `unit` with its status.
    """
    rec = Recorder(run_id, ledger, Checker(), budget, 0.0, getattr(tool, "simulated", False))
    pay = Payment(Kind.TOOL, Usage(cost_units=cost))
    history: list[Observed] = []
    steps: list[Step] = []
    command, outcome, fired = first, "max_actions", None
    for n in range(1, max_actions + 1):
        try:
            out, cls = rec.pay(pay, partial(tool, command), n), None
        except BudgetExhausted:
            outcome = "budget_exhausted"
            break
        except Exception as exc:  # a failed tool call is evidence, classified by the control plane
            out, cls = str(exc), classify(exc, "tool")
        obs = Observed(n, command, cls is None, out, cls.error_class if cls else None, artifact_of(command))
        history.append(obs)
        key = digest(f"{obs.error_class or ''}\0{obs.artifact}\0{obs.output}")
        steps.append(Step(unit, n - 1, digest(command), failures=frozenset({key})))
        rec.log(None, n, Role.TOOL, Kind.TOOL, detail={
            "unit": unit, "action": n, "command": command, "ok": obs.ok, "artifact": obs.artifact,
            "error_class": obs.error_class.value if obs.error_class else "", "reason": obs.output})  # fmt: skip
        if obs.ok:
            outcome = "done"
            break
        nxt = reflector.reflect(obs, tuple(history))
        _record_reflection(rec, unit, n, nxt)
        if nxt.reflection is not None or require_bound:
            r = check_bound(nxt.reflection, ledger, run_id)
            wanted = Action.CHANGE_AUTHORISATION if nxt.escalate else Action.STOP if not nxt.command else Action.NEW_HYPOTHESIS
            if not permits(r.error_class, wanted):
                raise PermissionRefused(f"{r.error_class.value} does not permit {wanted.value!r}")
        if nxt.escalate:
            rec.log(None, n, Role.HUMAN, Kind.ESCALATE, detail={
                "unit": unit, "action": n, "error_class": obs.error_class.value if obs.error_class else "",
                "reason": nxt.reflection.next_trial if nxt.reflection else nxt.text})  # fmt: skip
            outcome = "escalated"
            break
        if not nxt.command:
            outcome = "stopped"
            break
        fired = check(rules, History(steps=tuple(steps)))
        if fired is not None:
            outcome = "no_progress"
            break
        command = nxt.command
    rec.log(None, len(history), Role.CONTROL, Kind.STOP, detail={
        "unit": unit, "status": "success" if outcome == "done" else "incomplete", "reason": outcome,
        **({"rule": fired.rule} if fired is not None else {})})  # fmt: skip
    fresh = new_evidence(steps)
    return ToolRun(run_id, unit, reflector.name, len(history), budget.spent.cost_units,
                   sum(k for r, k in fresh.items() if r > 0), outcome, tuple(history))  # fmt: skip


def _record_reflection(rec: Recorder, unit: str, n: int, nxt: Next) -> None:
    r = nxt.reflection
    detail: dict[str, object] = {"unit": unit, "bound": r is not None, "note": nxt.text}
    if r is not None:
        detail |= {"action": r.action, "error_class": r.error_class.value, "artifact": r.artifact,
                   "open": list(r.open), "hypothesis": r.hypothesis, "next_trial": r.next_trial}  # fmt: skip
    rec.log(None, n, Role.TOOL_REFLECTOR, Kind.REFLECT, detail=detail)

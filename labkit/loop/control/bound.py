"""Observation-bound reflection over numbered tool actions (seed 002 §2).

A reflection may drive the next action only if it is bound to what was observed: it cites
the **action number**, the **error class** the control plane assigned to that action's
failure, the **artifact** the action touched, and the **explanations not yet ruled out**,
written as observation -> contributing hypothesis -> next trial. `check_bound` compares the
citation with the ledger's TOOL event: a reflection citing another class than the one
recorded, or another artifact, is rejected (InvalidRecord). The chosen next step must be
one the class grants (`core.error_classes`): under POLICY_DENIED only an authorisation
change or stop — here, escalation to a human.

`run_tool_task` is a configuration of `engine.run` (labkit.loop.engine.acting): the task is the
first command, the strategy wraps the reflector, and each round is the engine's: one numbered
action paid through the budget, never served from a cache (running `cp` twice is two effects),
classified by the control plane and recorded as a TOOL event; the reflector's proposal (a
command, escalate, or stop); then the bound check (`Acting.admit`: `check_bound` and `permits`,
which may refuse it) and the engine's decision, with the stop rules reading the actions.
It also counts *new evidence*: an outcome (class, artifact, reason) not seen before.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Protocol

from labkit.core.error_classes import Action, ErrorClass, permits
from labkit.core.errors import InvalidRecord, PermissionRefused
from labkit.core.types import Usage
from labkit.loop import engine
from labkit.loop.control.classify import classify_exception
from labkit.loop.engine.acting import Acting, Observed, Turn, command_task, evidence_key
from labkit.loop.engine.steps import Payment
from labkit.loop.engine.stopping import Rule, Step, new_evidence
from labkit.record.events import Kind, Role

if TYPE_CHECKING:
    from labkit.record.budget import Budget
    from labkit.record.ledger import Ledger

__all__ = [
    "BoundReflection",
    "Next",
    "Observed",
    "ToolReflector",
    "ToolRun",
    "check_bound",
    "observed",
    "run_tool_task",
]


@dataclass(frozen=True, kw_only=True)
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


@dataclass(frozen=True, kw_only=True)
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
        raise InvalidRecord(
            [
                f"action {r.action} was classified {d.get('error_class') or 'success'}, "
                f"the reflection says {r.error_class.value}"
            ]
        )
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
    budget or `max_actions` ends it: `engine.run` with `act=` (labkit.loop.engine.acting).

    Every action is paid and recorded through the engine's `Recorder` (one writer, one payer).
    After each action the `rules` read its history as the engine's stop rules do — action n is
    step n − 1, its outcome (class, artifact, reason) one evidence key — so
    `stopping.NoNewEvidence(k)` stops the run ("no_progress") after k actions in a row that
    added no new evidence. With `require_bound` an unbound reflection cannot drive the next
    action (InvalidRecord). The run's end is a STOP event of `unit` with its status.
    """
    actor = _Actor(reflector)
    act = Acting(
        tool=tool,
        artifact_of=artifact_of,
        classify=classify_exception,
        payment=Payment(Kind.TOOL, Usage(cost_units=cost)),
        unit=unit,
        admit=partial(_admit, require_bound),
        simulated=getattr(tool, "simulated", False),
    )
    out = engine.run(
        [command_task(unit, first)],
        actor,
        rounds=max_actions,
        rules=rules,
        ledger=ledger,
        budget=budget,
        run_id=run_id,
        act=act,
    )
    history = observed(ledger, run_id)  # read back from the run's TOOL events
    fresh = new_evidence(
        Step(case=unit, round=o.action - 1, state="", failures=frozenset({evidence_key(o)})) for o in history
    )
    return ToolRun(
        run_id=run_id,
        unit=unit,
        reflector=reflector.name,
        actions=len(history),
        spent=budget.spent.cost_units,
        new_evidence=sum(k for r, k in fresh.items() if r > 0),
        outcome=_OUTCOMES.get(out.stop.rule, "no_progress"),
        history=history,
    )


def observed(ledger: Ledger, run_id: str) -> tuple[Observed, ...]:
    """Every action of a tool run as its TOOL events recorded it."""
    out = []
    for e in ledger.events(run_id):
        if (e.role, e.kind) == (Role.TOOL, Kind.TOOL):
            d, cls = e.detail, str(e.detail.get("error_class", ""))
            out.append(
                Observed(
                    action=int(d["action"]),
                    command=str(d["command"]),
                    ok=bool(d["ok"]),
                    output=str(d["reason"]),
                    error_class=ErrorClass(cls) if cls else None,
                    artifact=str(d["artifact"]),
                )
            )
    return tuple(out)


# how the engine's ending reads as a tool run's outcome (a fired stop rule: "no_progress")
_OUTCOMES = {"done": "done", "escalate": "escalated", "actor-stop": "stopped", "budget": "budget_exhausted",
             "max-actions": "max_actions"}  # fmt: skip


@dataclass
class _Actor:
    """The reflector as the engine's actor: it proposes, the engine acts, records and decides."""

    reflector: ToolReflector

    @property
    def name(self) -> str:
        return self.reflector.name

    def propose(self, seen: Observed, history: tuple[Observed, ...]) -> Turn:
        nxt = self.reflector.reflect(seen, history)
        return Turn(
            nxt.command,
            nxt.escalate,
            nxt.reflection.next_trial if nxt.reflection else nxt.text,
            _reflect_detail(nxt),
            nxt,
        )


def _admit(require_bound: bool, turn: Turn, ledger: Ledger, run_id: str) -> None:
    """The bound check on a recorded proposal: its citation must match the ledger, and the class
    must permit what it asks (escalate: an authorisation change; a command: a new hypothesis)."""
    nxt: Next = turn.said
    if nxt.reflection is None and not require_bound:
        return
    r = check_bound(nxt.reflection, ledger, run_id)
    wanted = Action.CHANGE_AUTHORISATION if nxt.escalate else Action.STOP if not nxt.command else Action.NEW_HYPOTHESIS
    if not permits(r.error_class, wanted):
        raise PermissionRefused(f"{r.error_class.value} does not permit {wanted.value!r}")


def _reflect_detail(nxt: Next) -> dict[str, object]:
    r = nxt.reflection
    detail: dict[str, object] = {"bound": r is not None, "note": nxt.text}
    if r is not None:
        detail |= {
            "action": r.action,
            "error_class": r.error_class.value,
            "artifact": r.artifact,
            "open": list(r.open),
            "hypothesis": r.hypothesis,
            "next_trial": r.next_trial,
        }
    return detail

"""A tool task goes through `engine.run` (act=, labkit.loop.engine.acting): the ledger shows the
engine's shapes — start, define, then per action the paid observation (TOOL), the proposal
(REFLECT) and the decision (DECIDE), and the stop by rule — in the declared vocabulary. The
figures are the lesson's (tests/test_lessons.py asserts them too)."""

from __future__ import annotations

from dataclasses import dataclass

from labkit.experiments.lessons import bound_reflection as br
from labkit.loop import engine
from labkit.loop.control.bound import Observed, run_tool_task
from labkit.loop.control.classify import classify_exception
from labkit.loop.engine.acting import Acting, Turn, command_task
from labkit.loop.engine.steps import Payment
from labkit.loop.engine.stopping import NoNewEvidence
from labkit.record.budget import Budget, limits
from labkit.record.events import Kind, Role
from labkit.record.ledger import Ledger
from labkit.record.vocabulary import undeclared

MINE = (Role.EXPERIMENT, Role.DECISION, Role.TOOL, Role.TOOL_REFLECTOR, Role.HUMAN, Role.CONTROL)


def shapes(led: Ledger, run_id: str) -> list[tuple[str, str, str]]:
    """(role, kind, decision rule or "") of every event but the budget's."""
    return [(e.role, e.kind, str(e.detail.get("rule", ""))) for e in led.events(run_id) if e.role in MINE]


def test_a_bound_tool_task_records_the_engines_shapes_and_stops_by_escalation() -> None:
    led = Ledger()
    unbound, bound = br.compare(led)
    assert (bound.outcome, bound.actions, bound.spent, unbound.outcome, unbound.actions) == (
        "escalated",
        1,
        1.0,
        "budget_exhausted",
        6,
    )
    assert shapes(led, "deploy-bound") == [
        (Role.EXPERIMENT, Kind.START, ""),
        (Role.DECISION, Kind.DEFINE, ""),  # step 1: the acceptance first
        (Role.TOOL, Kind.TOOL, ""),  # the action, observed and classified
        (Role.TOOL_REFLECTOR, Kind.REFLECT, ""),  # the proposal
        (Role.DECISION, Kind.DECIDE, "escalate"),  # the engine's decision
        (Role.HUMAN, Kind.ESCALATE, ""),
        (Role.CONTROL, Kind.STOP, ""),
    ]
    # the unbound reflector: six actions, each decided "act again"; the budget cannot pay a seventh
    rules = [r for _, k, r in shapes(led, "deploy-unbound") if k == Kind.DECIDE]
    assert rules == ["next-action"] * 6
    stop = led.events("deploy-unbound")[-1]
    assert (stop.kind, stop.detail["reason"], stop.detail["status"]) == (Kind.STOP, "budget_exhausted", "incomplete")
    # every action was paid before its observation: reserved, then charged, under the TOOL kind
    budget = [(e.kind, e.detail["status"]) for e in led.events("deploy-unbound") if e.role == "budget"]
    assert budget[:2] == [(Kind.TOOL, "reserved"), (Kind.TOOL, "unknown")]
    assert not [e for e in led.events() if undeclared(e.role, e.kind, e.detail)]
    define = next(e for e in led.events("deploy-bound") if e.kind == Kind.DEFINE)
    assert define.detail["suite"] == command_task("deploy-bound", br.FIRST).suite.digest  # the acceptance, fixed first


def test_the_no_new_evidence_rule_stops_a_tool_task_as_an_engine_rule() -> None:
    led = Ledger()
    run = run_tool_task(
        br.SimulatedShell(),
        br.artifact_of,
        br.Unbound(),
        br.FIRST,
        run_id="r",
        unit="r",
        ledger=led,
        budget=Budget(limits(cost_units=br.BUDGET), ledger=led, run_id="r"),
        rules=(NoNewEvidence(3),),
    )
    assert (run.outcome, run.actions) == ("no_progress", 4)
    decide = [e.detail for e in led.events("r") if e.kind == Kind.DECIDE]
    assert [d["rule"] for d in decide] == ["next-action"] * 3 + ["no_new_evidence"]
    assert decide[-1]["decision"] == "stop"
    start = next(e for e in led.events("r") if e.kind == Kind.START)
    assert start.detail["rules"] == ["no_new_evidence"]


@dataclass
class Repeat:
    """Proposes the same command again, then a different one that succeeds."""

    name: str = "repeat (scripted)"

    def propose(self, seen: Observed, history: tuple[Observed, ...]) -> Turn:
        return Turn("cp app.conf /tmp/" if len(history) >= 2 else seen.command, record={"bound": False, "note": ""})


def test_engine_run_with_act_pays_every_action_even_a_repeat_and_ends_done() -> None:
    led = Ledger()
    shell = br.SimulatedShell()
    budget = Budget(limits(cost_units=10), ledger=led, run_id="act")
    act = Acting(
        tool=shell,
        artifact_of=br.artifact_of,
        classify=classify_exception,
        payment=Payment.fixed(Kind.TOOL, 2.0),
        unit="act",
        simulated=True,
    )
    out = engine.run(
        [command_task("act", br.FIRST)], Repeat(), rounds=5, ledger=led, budget=budget, run_id="act", act=act
    )
    # the same command twice is two effects, both run and paid (no cache serves an action)
    assert shell.calls == [br.FIRST, br.FIRST, "cp app.conf /tmp/"]
    assert budget.spent.cost_units == 6.0
    assert (out.stop.rule, out.rounds_run, out.traces) == ("done", 3, {})
    stop = led.events("act")[-1]
    assert (stop.kind, stop.detail["status"], stop.detail["reason"]) == (Kind.STOP, "success", "done")
    # the run's own accessor reads the decisions as for any engine run
    assert [(d.round, d.rule, d.proposal) for d in out.decisions()] == [
        (1, "next-action", "action 2"),
        (2, "next-action", "action 3"),
        (3, "done", "action 3"),
    ]


def test_a_tool_task_is_refused_outside_its_configuration() -> None:
    import pytest

    from labkit.core.errors import InvalidSetting

    act = Acting(
        tool=br.SimulatedShell(),
        artifact_of=br.artifact_of,
        classify=classify_exception,
        payment=Payment.fixed(Kind.TOOL, 1.0),
        unit="u",
    )
    tasks = [command_task("a", br.FIRST), command_task("b", br.FIRST)]
    with pytest.raises(InvalidSetting, match="one task"):
        engine.run(tasks, Repeat(), act=act)

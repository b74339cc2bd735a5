"""The engine's frontier seam: expansion policies, last round's attempts in the situation, the
winner-plus-confirmation ending and the stalled guard. A scripted validator (simulated: no
pytest runs here) reads each candidate's one file as a state name and returns that state's
verdict from a table, so every route through the graph below is known in advance:

    start (a, b, c fail) -> x (a, b fail: kept)      -> xg (green; its sealed final set FAILS)
                         -> y (breaks protective d)
                         -> z (c fails: kept)        -> zg (green; its sealed final set passes)
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from types import SimpleNamespace

import pytest

from labkit.core.errors import InvalidSetting
from labkit.core.types import Candidate, Evidence, TestResult, Usage, Verdict
from labkit.grading.acceptance import AcceptanceSuite
from labkit.grading.verdicts import Checker
from labkit.loop import engine
from labkit.loop.engine.expand import Confirmation, FrontierLimits, Node
from labkit.loop.engine.steps import Payment, Prices
from labkit.loop.engine.stopping import Stalled
from labkit.loop.engine.strategy import Child, Proposal, Situation
from labkit.loop.engine.trace import Task
from labkit.record.budget import Budget, limits
from labkit.record.events import Kind, Role
from labkit.record.ledger import Ledger
from labkit.record.vocabulary import undeclared

F2P, P2P = ("t.py::a", "t.py::b", "t.py::c"), ("t.py::d",)
FAILING = {
    "start": {"a", "b", "c"},
    "x": {"a", "b"},
    "y": {"a", "b", "c", "d"},
    "z": {"c"},
    "xg": set(),
    "zg": set(),
}
HIDDEN_OK = {"zg"}
CHILDREN = {"start": ("x", "y", "z"), "x": ("xg",), "z": ("zg", "x")}
VISIBLE = AcceptanceSuite(
    name="graph:visible", tests={"t.py": "a = 0\nb = 0\nc = 0\nd = 0\n"}, fail_to_pass=F2P, pass_to_pass=P2P
)
HIDDEN = AcceptanceSuite(
    name="graph:hidden", tests={"t_hidden.py": "h = 0\n"}, fail_to_pass=("t_hidden.py::h",), pass_to_pass=()
)


def state(name: str) -> Candidate:
    return Candidate({"m.py": name}, label=name)


@dataclass
class Scripted:
    """The table above as a validator (simulated)."""

    id: str = "scripted-graph"
    python: str = sys.executable
    limits: SimpleNamespace = field(default_factory=lambda: SimpleNamespace(wall_seconds=1.0))

    def run(self, candidate: Candidate, suite: AcceptanceSuite) -> Verdict:
        name = str(candidate.files["m.py"])
        if suite is HIDDEN:
            ok = name in HIDDEN_OK
            ev = Evidence(
                candidate=candidate.digest,
                suite=suite.digest,
                validator=self.id,
                results=(TestResult("t_hidden.py::h", "passed" if ok else "failed"),),
                exit_code=0,
                wall_seconds=0.0,
            )
            return Verdict(ev, ("t_hidden.py::h",) if ok else (), () if ok else ("t_hidden.py::h",), (), ())
        bad = {f"t.py::{t}" for t in FAILING[name]}
        results = tuple(TestResult(t, "failed" if t in bad else "passed") for t in F2P + P2P)
        ev = Evidence(
            candidate=candidate.digest,
            suite=suite.digest,
            validator=self.id,
            results=results,
            exit_code=1 if bad else 0,
            wall_seconds=0.0,
        )
        return Verdict(
            ev,
            tuple(t for t in F2P if t not in bad),
            tuple(t for t in F2P if t in bad),
            tuple(t for t in P2P if t not in bad),
            tuple(t for t in P2P if t in bad),
        )


@dataclass
class Graph:
    """Proposes the graph's children of the state it is shown; keeps every situation (simulated)."""

    name: str = "graph (simulated)"
    simulated: bool = True
    seen: list[Situation] = field(default_factory=list)

    def propose(self, situation: Situation) -> Proposal:
        self.seen.append(situation)
        here = str(situation.candidate.files["m.py"])
        return Proposal(children=tuple(Child(target=state(n), name=n, source="graph") for n in CHILDREN.get(here, ())))


first_green = SimpleNamespace(name="first green", key=lambda node, start: node.order)


def task() -> Task:
    return Task(id="graph", start=state("start"), suite=VISIBLE, hidden=HIDDEN)


def go(expand: str, **kw: object) -> tuple[engine.EngineRun, Graph]:
    strategy = Graph()
    out = engine.run(
        [task()],
        strategy,
        Checker(Scripted()),
        rounds=6,
        expand=expand,
        stop_at_green=False,  # type: ignore[arg-type]
        confirm=Confirmation(first_green),
        **kw,
    )  # type: ignore[arg-type]
    return out, strategy


def expanded(strategy: Graph) -> list[str]:
    return [str(s.candidate.files["m.py"]) for s in strategy.seen]


@pytest.mark.parametrize(
    ("policy", "order", "winner", "confirmed"),
    [
        ("breadth", ["start", "x", "z"], "xg", False),  # first in, first out: x's green is sealed first
        ("best", ["start", "z", "x"], "zg", True),  # fewest visible failures first: z (1) before x (2)
    ],
)
def test_a_frontier_expands_kept_states_by_policy_and_confirms_the_preregistered_winner(
    policy: str, order: list[str], winner: str, confirmed: bool
) -> None:
    out, strategy = go(policy)
    # y broke a protective test (rolled back, never queued); x re-proposed from z was queued before.
    assert expanded(strategy) == order
    assert out.stop.rule == "frontier-empty" and out.rounds_run == 3  # three expansions, then none waits
    w = out.winners["graph"]
    assert (w.node.state, w.confirmed, w.rule) == (winner, confirmed, "first green")
    events = out.ledger.events(out.run_id)
    assert not [e for e in events if undeclared(e.role, e.kind, e.detail)]
    confirms = [e for e in events if (e.role, e.kind) == (Role.DECISION, Kind.CONFIRM)]
    assert [(c.detail["state"], c.detail["confirmed"], c.detail["green"]) for c in confirms] == [(winner, confirmed, 2)]
    # the verdict behind a confirmation never leaves it: no hidden test name in the ledger's confirm
    assert "t_hidden" not in str(confirms[0].detail) and not confirms[0].evidence
    decides = [e.detail for e in events if e.kind == Kind.DECIDE]
    assert [d["frontier"] for d in decides] == [2, 1, 0]
    start = next(e.detail for e in events if e.kind == Kind.START)
    assert start["expand"] == policy


def test_a_situation_carries_last_rounds_attempts_with_visible_verdicts_only() -> None:
    _, strategy = go("breadth")
    first, second = strategy.seen[:2]
    assert first.attempts == ()
    tried = {t.child: t for t in second.attempts}
    assert [t.child for t in second.attempts] == ["x", "y", "z"]
    assert (tried["x"].decision, tried["y"].decision, tried["z"].decision) == (
        "keep",
        "roll back",
        "keep",
    )
    assert tried["y"].failing == ("t.py::a", "t.py::b", "t.py::c", "t.py::d") and tried["y"].resolved is False
    assert not any("t_hidden" in f for s in strategy.seen for t in s.attempts for f in t.failing)


def test_depth_limit_leaves_nothing_to_expand_and_no_winner() -> None:
    out, strategy = go("breadth", limits=FrontierLimits(max_depth=1))
    assert expanded(strategy) == ["start"]  # x and z would sit at depth 1: not queued
    assert out.stop.rule == "frontier-empty" and out.winners == {}


def test_max_children_truncates_a_proposal() -> None:
    out, strategy = go("breadth", limits=FrontierLimits(max_children=1))
    assert expanded(strategy) == ["start", "x"]  # only x of (x, y, z) was validated
    assert out.winners["graph"].node.state == "xg"


def test_hold_is_the_default_and_records_as_before() -> None:
    strategy = Graph()
    out = engine.run([task()], strategy, Checker(Scripted()), rounds=3)  # type: ignore[arg-type]
    events = out.ledger.events(out.run_id)
    assert "expand" not in next(e.detail for e in events if e.kind == Kind.START)
    assert all("frontier" not in e.detail for e in events if e.kind == Kind.DECIDE)
    assert not [e for e in events if e.kind == Kind.CONFIRM] and out.winners == {}
    # hold: the best kept child (z, one failure) replaces start; then z's green child zg; green stops it
    assert expanded(strategy) == ["start", "z"] and out.final["graph"] == "zg"


def test_the_confirmation_is_paid_from_the_reserve_and_unfunded_says_so() -> None:
    led = Ledger()
    budget = Budget(limits(cost_units=100), confirmation=Usage(cost_units=2), ledger=led, run_id="paid")
    out = engine.run(
        [task()],
        Graph(),
        Checker(Scripted()),
        rounds=6,
        expand="best",
        stop_at_green=False,
        ledger=led,  # type: ignore[arg-type]
        budget=budget,
        run_id="paid",
        confirm=Confirmation(first_green, cost=2),
    )
    assert out.winners["graph"].confirmed is True
    paid = [
        e
        for e in led.events("paid")
        if e.role == Role.BUDGET and e.kind == Kind.CONFIRM and e.detail.get("status") == "settled"
    ]
    assert [(e.cost_units, e.detail.get("from_reserve")) for e in paid] == [(2.0, True)]
    led = Ledger()
    budget = Budget(limits(cost_units=100), ledger=led, run_id="unfunded")  # no reserve held back
    out = engine.run(
        [task()],
        Graph(),
        Checker(Scripted()),
        rounds=6,
        expand="best",
        stop_at_green=False,
        ledger=led,  # type: ignore[arg-type]
        budget=budget,
        run_id="unfunded",
        confirm=Confirmation(first_green, cost=200),
    )
    w = out.winners["graph"]
    assert w.confirmed is None and w.reason.startswith("confirmation unfunded")


def test_stalled_stops_a_case_that_keeps_no_new_state() -> None:
    class Worse:
        name, simulated = "worse (simulated)", True

        def propose(self, situation: Situation) -> Proposal:
            return Proposal(children=(Child(target=state("y"), name="y"),))

    out = engine.run([task()], Worse(), Checker(Scripted()), rounds=6, case_rules=(Stalled(2),))  # type: ignore[arg-type]
    assert out.stop.rule == "stalled" and out.rounds_run == 2
    assert "rounds 1..2 kept no new state" in out.stop.reason


def test_bad_settings_are_refused() -> None:
    with pytest.raises(InvalidSetting, match="expand must be one of"):
        engine.run([task()], Graph(), Checker(Scripted()), expand="depth")  # type: ignore[arg-type]
    with pytest.raises(InvalidSetting, match="sealed final set"):
        engine.run(
            [Task(id="v", start=state("start"), suite=VISIBLE)],
            Graph(),
            Checker(Scripted()),
            confirm=Confirmation(first_green),
        )  # type: ignore[arg-type]
    with pytest.raises(InvalidSetting, match="max_depth"):
        FrontierLimits(max_depth=0)
    assert Node(candidate=state("x"), verdict=Scripted().run(state("x"), VISIBLE), state="x").key == (
        state("x").digest,
        "x",
    )


def test_a_declared_price_list_bills_each_proposal_and_step_4_and_can_leave_the_start_unbilled() -> None:
    led = Ledger()
    budget = Budget(limits(cost_units=100), ledger=led, run_id="priced")
    prices = Prices(Payment.fixed(Kind.GENERATE, 3), Payment.fixed(Kind.EXECUTE, 2), start=False)
    engine.run(
        [task()],
        Graph(),
        Checker(Scripted()),
        rounds=1,
        stop_at_green=False,
        ledger=led,
        budget=budget,  # type: ignore[arg-type]
        run_id="priced",
        prices=prices,
    )
    settled = [
        (e.kind, e.cost_units)
        for e in led.events("priced")
        if e.role == Role.BUDGET and e.detail.get("status") == "settled"
    ]
    # the start validated outside the budget (its verdict is the input: no charge, no wall time); one
    # generation (3); three children executed (2 each) and validated (1 each)
    expected = [("generate", 3.0)] + [("execute", 2.0)] * 3 + [("verify", 1.0)] * 3
    assert sorted(settled) == sorted(expected)

"""Frontier search as a configuration of `engine.run` (`search_case.engine_search`) against the
search's own loop (`search_case.search`, `run_search`) on the api_change case: real pytest runs,
one verdict cache shared by both. At every budget the two agree on how the task ends, which
route wins, whether the sealed final set confirms it, and what was spent on each kind of action.
The engine's ledger shows the engine's event shapes, in the declared vocabulary."""

from __future__ import annotations

import pytest

from labkit.grading.sealed import SearchCase, load_search_case
from labkit.grading.validator import Validator
from labkit.grading.verdicts import Checker, VerdictCache
from labkit.loop.search.search_case import engine_search, search, spend
from labkit.record.events import Kind, Role
from labkit.record.ledger import Ledger
from labkit.record.vocabulary import undeclared


@pytest.fixture(scope="module")
def case() -> SearchCase:
    return load_search_case("api_change")


@pytest.fixture(scope="module")
def checker() -> Checker:
    return Checker(Validator(), VerdictCache())


@pytest.mark.parametrize(
    "total", [4, 8, 11, 15, 20]
)  # nothing affordable, 1 child, 2, success, 2nd expansion
def test_the_engine_configuration_spends_and_ends_as_the_search_loop(
    case: SearchCase, checker: Checker, total: int
) -> None:
    baseline = checker.check(case.case.start, case.suite).verdict
    old, new = Ledger(), Ledger()
    loop = search(case, checker, baseline, total=total, reserve=2, ledger=old, run_id="loop")
    run = engine_search(case, checker, total=total, reserve=2, ledger=new, run_id="engine")
    winner = run.winners.get(case.case.name)
    assert (winner.node.state if winner else None) == (loop.winner.route if loop.winner else None)
    assert (winner.confirmed if winner else None) == loop.confirmed
    assert spend(new, "engine", total).by_kind == spend(old, "loop", total).by_kind
    assert (run.stop.rule == "budget") == (loop.reason == "budget_exhausted")


def test_the_engine_configuration_records_the_engine_shapes(
    case: SearchCase, checker: Checker
) -> None:
    led = Ledger()
    run = engine_search(case, checker, total=20, reserve=2, ledger=led, run_id="engine")
    events = led.events(run.run_id)
    shapes = {(e.role, e.kind) for e in events}
    for shape in [(Role.DECISION, Kind.DEFINE), (Role.EXECUTOR, Kind.GENERATE), (Role.VALIDATOR, Kind.VERIFY),
                  (Role.DECISION, Kind.DECIDE), (Role.DECISION, Kind.CONFIRM), (Role.DECISION, Kind.STOP)]:  # fmt: skip
        assert shape in shapes, shape
    assert not [
        e for e in events if e.role == Role.SEARCH
    ]  # no loop of its own, no writer of its own
    assert not [e for e in events if undeclared(e.role, e.kind, e.detail)]
    decides = [e.detail for e in events if e.kind == Kind.DECIDE]
    assert all("frontier" in d for d in decides)
    assert run.winners[case.case.name].confirmed is True

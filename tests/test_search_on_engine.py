"""Frontier search goes through `engine.run` (labkit.loop.search.search_run) on the api_change case:
real pytest runs, one verdict cache. The figures are the ones the search's own loop gave before it
was deleted (session 33: status, reason, winner, confirmation and spend per kind at each total,
checked then at every total from 0 to 40, branch by branch and step by step); the ledger holds
only the engine's event shapes, in the declared vocabulary."""

from __future__ import annotations

import pytest

from labkit.grading.sealed import SearchCase, load_search_case
from labkit.grading.validator import Validator
from labkit.grading.verdicts import Checker, VerdictCache
from labkit.loop.search.search_case import search_run, spend
from labkit.record.events import Kind, Role
from labkit.record.ledger import Ledger
from labkit.record.vocabulary import undeclared

C = "C fix the callers"


@pytest.fixture(scope="module")
def case() -> SearchCase:
    return load_search_case("api_change")


@pytest.fixture(scope="module")
def checker() -> Checker:
    return Checker(Validator(), VerdictCache())


@pytest.mark.parametrize(
    ("total", "status", "winner", "by_kind"),
    [
        (4, "incomplete", None, {}),  # nothing affordable: 3 does not fit in 4 - 2
        (8, "incomplete", None, {"generate": 3, "execute": 2, "verify": 1}),  # one child
        (11, "incomplete", None, {"generate": 3, "execute": 4, "verify": 2}),  # two
        (15, "success", C, {"generate": 3, "execute": 6, "verify": 3, "confirm": 2}),  # the chapter's trace
        (20, "success", C, {"generate": 6, "execute": 8, "verify": 4, "confirm": 2}),  # a second expansion
    ],
)
def test_the_search_on_the_engine_spends_and_ends_as_the_chapter_says(
    case: SearchCase, checker: Checker, total: int, status: str, winner: str | None, by_kind: dict[str, float]
) -> None:
    led = Ledger()
    out = search_run(case, checker, total=total, reserve=2, ledger=led, run_id="engine")
    r = out.result
    assert (r.status, r.reason, r.winner.route if r.winner else None) == (status, "budget_exhausted", winner)
    assert r.confirmed is (True if winner else None)
    assert spend(led, "engine", total).by_kind == by_kind
    assert out.run.stop.rule == "budget"  # the engine's own stop, which the search reads as its reason
    engine_winner = out.run.winners.get(case.case.name)
    assert (engine_winner.node.state if engine_winner else None) == winner


def test_the_search_records_only_the_engines_shapes(case: SearchCase, checker: Checker) -> None:
    led = Ledger()
    out = search_run(case, checker, total=20, reserve=2, ledger=led, run_id="engine")
    events = led.events(out.run.run_id)
    shapes = {(e.role, e.kind) for e in events}
    for shape in [
        (Role.EXPERIMENT, Kind.START),
        (Role.DECISION, Kind.DEFINE),
        (Role.REFLECTOR, Kind.REFLECT),
        (Role.EXECUTOR, Kind.GENERATE),
        (Role.VALIDATOR, Kind.VERIFY),
        (Role.DECISION, Kind.DECIDE),
        (Role.DECISION, Kind.CONFIRM),
        (Role.DECISION, Kind.STOP),
    ]:
        assert shape in shapes, shape
    assert not [e for e in events if e.role == Role.SEARCH]  # no loop of its own, no writer of its own
    assert not [e for e in events if undeclared(e.role, e.kind, e.detail)]
    assert all("frontier" in e.detail for e in events if e.kind == Kind.DECIDE)
    start = next(e for e in events if e.kind == Kind.START)
    assert (start.detail["expand"], start.detail["winner_rule"], start.detail["reserve"]) == (
        "breadth",
        out.result.rule,
        2,
    )
    assert out.run.winners[case.case.name].confirmed is True
    # nothing of the sealed final set comes out but the winner's pass/fail: rounds are scored visibly
    assert {e.detail["scored_on"] for e in events if e.kind == Kind.SCORE} == {"visible"}
    stop = next(e for e in events if e.kind == Kind.STOP)
    assert (stop.detail["unit"], stop.detail["status"], stop.detail["confirmed"]) == ("engine", "success", True)

"""`Ledger.rounds()`: a decision column, and each charge counted once (issue 29)."""

from __future__ import annotations

from labkit.core.types import Usage
from labkit.record.budget import Budget, limits
from labkit.record.ledger import Ledger


def test_a_budgeted_runs_cost_is_the_budgets_charges_counted_once() -> None:
    led = Ledger()
    budget = Budget(limits(cost_units=10), ledger=led, run_id="r")
    for rnd, cost in ((0, 1.0), (1, 2.0)):
        budget.settle(budget.reserve("verify", Usage(cost_units=cost), round=rnd), Usage(cost_units=cost))
        led.record("r", rnd, "validator", "verify", usage=Usage(cost_units=cost))  # the acting role's copy
    led.record("r", 1, "decision", "decide", detail={"decision": "keep", "reason": "F2P pass"})
    led.record("r", 1, "decision", "stop", detail={"run": True, "reason": "resolved"})
    rows = led.rounds("r")
    assert rows.select("round", "decision", "reason", "stop", "cost_units", "counted_from").rows() == [
        (0, "", "", "", 1.0, "budget"),
        (1, "keep", "F2P pass", "resolved", 2.0, "budget"),
    ]
    assert led.frame("r")["cost_units"].sum() == 2 * rows["cost_units"].sum()  # the plain sum doubles


def test_without_a_budget_the_acting_roles_count_and_cases_are_named() -> None:
    led = Ledger()
    led.record("s", 1, "validator", "verify", usage=Usage(cost_units=1.5))
    for case, decision in (("a", "keep"), ("b", "roll back")):
        led.record(
            "s",
            1,
            "decision",
            "decide",
            detail={"case": case, "decision": decision, "reason": case},
        )
    (row,) = led.rounds("s").iter_rows(named=True)
    assert (row["decision"], row["reason"]) == ("a: keep; b: roll back", "a: a; b: b")
    assert (row["cost_units"], row["counted_from"]) == (1.5, "actions")

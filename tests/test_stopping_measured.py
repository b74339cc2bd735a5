"""Stopping behaviour and planning, measured (seed 002 §7): stop timing, planning, wrong-tool cases."""

from __future__ import annotations

from dataclasses import asdict

import pytest
from recordings import assert_as_recorded

from labkit.experiments.arms import planning, stops
from labkit.record.ledger import Ledger


@pytest.mark.parametrize(
    ("scores", "rule", "expected"),
    [
        ([(0, False), (1, True)], "resolved", "on time"),
        ([(0, True)], "resolved", "on time"),  # nothing to do, nothing done
        (
            [(0, False), (1, True), (2, True)],
            "round-cap",
            "late",
        ),  # kept working after the hidden pass
        ([(0, False), (1, True), (2, False)], "budget", "late, broke"),
        ([(0, False), (1, False)], "resolved", "early"),  # visible pass, hidden fail
        ([(0, False), (1, False)], "round-cap", "cut off"),
    ],
)
def test_a_stop_is_timed_against_the_hidden_outcome(scores: list[tuple[int, bool]], rule: str, expected: str) -> None:
    assert stops.timing(scores, rule) == expected


def test_the_stop_audit_and_the_published_verifier_reproduce_the_recording() -> None:
    record = stops.recorded()
    audit = stops.audit_counts(stops.stop_audit(Ledger(stops.SWEEP, read_only=True)))
    assert_as_recorded(audit, record["audit"], record, "the stop audit")
    assert sum(a["jobs"] for a in audit) == 224
    assert sum(a["early"] for a in audit) == 45 and sum(a["late"] for a in audit) == 34
    w = stops.weak_verifier("simple-humaneval")
    assert_as_recorded(
        asdict(w)["accepted_wrong"],
        record["verifier"][0]["accepted_wrong"],
        record,
        "false accepts",
    )
    ship, escalate = w.expected_loss(100.0, 1.0)
    assert ship > escalate and w.expected_loss(10.0, 1.0)[0] < escalate  # the loss decides the tool


def test_where_the_plan_helped_depends_on_the_configuration() -> None:
    record = stops.recorded()
    now = planning.compare()
    assert_as_recorded(now, record["planning"], record, "the planning comparison")
    assert [r["helped"] for r in now] == [
        "completion",
        "fewer repeated verifications (completion within 5 points)",
    ]


def test_the_fixed_procedure_re_runs_to_its_recorded_price() -> None:
    record = stops.recorded()
    now = asdict(stops.fixed_procedure(open_search=False))
    keep = ("procedure_spent", "procedure_status", "prices")
    assert_as_recorded(
        {k: now[k] for k in keep},
        {k: record["fixed"][k] for k in keep},
        record,
        "the fixed procedure",
    )
    assert record["fixed"]["search_spent"] > now["procedure_spent"]

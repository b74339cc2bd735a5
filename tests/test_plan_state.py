"""Fix the plan vs fix the state (seed 002 §5): both restores run through the engine and validator."""

from __future__ import annotations

import pytest

from labkit.experiments.lessons import plan_state as ps
from labkit.record.events import Kind
from labkit.record.ledger import Ledger


@pytest.fixture(scope="module")
def told() -> tuple[ps.Story, Ledger]:
    led = Ledger()
    return ps.story(ledger=led), led


def test_a_plan_error_changes_route_from_the_same_checkpoint(told: tuple[ps.Story, Ledger]) -> None:
    s, _ = told
    assert [(r, d) for r, d, _ in s.plan_decisions] == [
        (ps.ROUTE_A, "roll back"),
        (ps.ROUTE_B, "keep"),
    ]
    assert s.plan_resolved
    assert s.plan_audit == ()  # nothing but the code changed: restoring the code restores everything


def test_a_code_only_restore_leaves_a_mixed_state_and_the_right_fix_is_rolled_back(
    told: tuple[ps.Story, Ledger],
) -> None:
    s, _ = told
    assert s.upgrade_decision == "roll back" and s.upgraded_parts == tuple(ps.PARTS)
    code_only, complete = s.restores
    assert code_only.parts == ("code version",)
    assert code_only.left_different == ("dependency image", "environment")
    # the wrong verdict: route B is the right fix, and the mixed state makes the engine reject it
    assert (code_only.decision, code_only.resolved) == ("roll back", False)
    assert "cannot import name 'round_cents'" in code_only.failure
    assert complete.left_different == ()
    assert (complete.decision, complete.resolved, complete.failure) == ("keep", True, "")


def test_checkpoints_record_every_part_a_complete_restore_needs(
    told: tuple[ps.Story, Ledger],
) -> None:
    s, led = told
    events = [e for e in led.events(s.run_id) if e.kind == Kind.CHECKPOINT]
    assert len(events) == 4  # C0, after the upgrade, after each restore
    for e in events:
        assert {"code_version", "dependency_image", "environment", "position"} <= set(e.detail)
    c0, c1 = s.checkpoints
    assert c0.parts != c1.parts and set(c0.parts) == set(ps.PARTS)
    # the complete restore's checkpoint equals C0 part by part; the code-only one only in its code
    after_code, after_all = events[2].detail, events[3].detail
    assert after_all["dependency_image"] == events[0].detail["dependency_image"]
    assert after_code["code_version"] == events[0].detail["code_version"]
    assert after_code["dependency_image"] != events[0].detail["dependency_image"]


def test_the_audit_names_each_part_that_differs() -> None:
    led = Ledger()
    c0 = ps.checkpoint("C0", ps.state("v0", "1.0", "v0"), led, "audit")
    upgraded = ps.state(ps.UPGRADE, "2.0", "up")
    assert ps.audit(upgraded, c0) == tuple(ps.PARTS)
    assert ps.audit(ps.restore(upgraded, c0, ("code version", "dependency image"), "r"), c0) == ("environment",)
    assert ps.audit(ps.restore(upgraded, c0, tuple(ps.PARTS), "r"), c0) == ()


def test_the_page_shows_both_restores_and_the_wrong_verdict(told: tuple[ps.Story, Ledger]) -> None:
    from labkit.views import diagnosis

    s, led = told
    assert diagnosis.restores_frame(s)["engine's decision on route B (the right fix)"].to_list() == [
        "roll back",
        "keep",
    ]
    assert "the engine **rolls back** a correct patch" in diagnosis.restores_caption(s)
    assert diagnosis.checkpoints_frame(led, s.run_id).height == 4

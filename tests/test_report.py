import pytest

from labkit.grading.cases import load_case
from labkit.grading.validator import Validator
from labkit.loop.engine import Reflection, Situation, run_loop
from labkit.loop.reflection import check_record
from labkit.record.ledger import Ledger
from labkit.views.report import evidence_frame, ledger_rows, scores_frame, step_labels, step_view

CASE = load_case("cache_isolation")


class TwoSteps:
    name, simulated = "two-steps", True

    def reflect(self, s: Situation) -> Reflection:
        patch = CASE.patch("disable_cache" if s.round == 1 else "composite_key")
        iso, hits = CASE.suite.groups["isolation"], CASE.suite.groups["same-user hit"]
        rec = check_record(
            {
                "phenomenon": "leak",
                "evidence_ref": iso[0],
                "environment": "v1",
                "hypothesis": {"cause": patch.description, "refuted_if": "still leaks"},
                "action": patch.description,
                "expected": {"acceptance": list(iso), "protective": list(hits)},
            }
        )
        return Reflection(record=rec, patch=patch)


@pytest.fixture(scope="module")
def run():
    ledger = Ledger()
    trace = run_loop(CASE.start, CASE.suite, Validator(), TwoSteps(), ledger=ledger, run_id="r")
    return trace, ledger.frame("r")


def test_scores_frame_tracks_each_step(run):
    trace, _ = run
    s = scores_frame(trace, CASE.suite)
    got = {(r["step"], r["group"]): r["passed"] for r in s.iter_rows(named=True)}
    assert got[(0, "isolation")] == 0 and got[(0, "same-user hit")] == 2
    assert got[(1, "isolation")] == 2 and got[(1, "same-user hit")] == 0  # disable cache
    assert got[(2, "isolation")] == 2 and got[(2, "same-user hit")] == 2  # composite key


def test_step_views_show_the_right_round(run):
    trace, _ = run
    assert step_labels(trace) == [
        f"start · {CASE.start.label}",
        "round 1 · roll back",
        "round 2 · keep",
    ]
    v0, v1, v2 = (step_view(trace, i, CASE.suite) for i in range(3))
    assert v0.decision == "reflect" and not v0.diff
    assert v1.decision == "roll back" and "fetch_price" in v1.diff
    assert v2.decision == "keep" and "(user_id, product_id)" in v2.diff
    with pytest.raises(IndexError, match="outside 0..2"):
        step_view(trace, 3)


def test_evidence_frame_buckets(run):
    trace, _ = run
    ev = evidence_frame(trace.rounds[0].retest, CASE.suite)
    assert sorted(ev["bucket"].to_list()) == [
        "FAIL_TO_PASS",
        "FAIL_TO_PASS",
        "PASS_TO_FAIL",
        "PASS_TO_FAIL",
    ]


def test_ledger_rows_are_the_steps_events(run):
    _, frame = run
    kinds = ledger_rows(frame, 1)["kind"].to_list()
    assert kinds[:1] == ["reflect"] and "decide" in kinds


def test_rounds_frame_says_what_was_decided_and_why(run):
    trace, _ = run
    from labkit.views.report import rounds_frame

    f = rounds_frame(trace)
    assert f["decision"].to_list() == ["roll back", "keep"]
    assert "protective" in f["why"][0]

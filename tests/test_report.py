import pytest

from labkit.grading.cases import load_case
from labkit.grading.validator import Validator
from labkit.loop.engine import Proposal, Situation, run_loop
from labkit.loop.engine.reflection import check_record
from labkit.record.ledger import Ledger
from labkit.views.report import evidence_frame, ledger_rows, scores_frame, step_labels, step_view

CASE = load_case("cache_isolation")


class TwoSteps:
    name, simulated = "two-steps", True

    def reflect(self, s: Situation) -> Proposal:
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
        return Proposal(record=rec, patch=patch)


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


def test_each_step_says_what_changed_in_one_line(run):
    from labkit.views.report import what_changed

    trace, _ = run
    start, rolled, kept = (what_changed(trace, i) for i in range(3))
    assert start.startswith("start: failing acceptance passes 0/2") and "2 test(s) fail" in start
    assert rolled == (
        "2 now pass (test_user_a_does_not_get_user_b_price, test_user_b_does_not_get_user_a_price); "
        "2 now fail (test_repeat_request_is_served_from_cache, test_second_users_repeat_is_a_hit)"
        " → roll back"
    )
    assert kept.startswith("2 now pass") and "now fail" not in kept and kept.endswith("→ keep")
    assert step_view(trace, 1, CASE.suite).changed == rolled


def test_step_card_reads_as_prose_and_plain_tables(run):
    from labkit.views.step_card import trace_pages

    trace, frame = run
    pages = trace_pages(trace, CASE.suite, frame)
    card = pages[1]
    assert "What changed</b>: 2 now pass" in card
    # the expected verification in words, not JSON
    assert "must now pass: test_user_b_does_not_get_user_a_price" in card and '{"acceptance"' not in card
    # ledger rows: a plain table, no polars dtype row, no quoted strings
    assert "<table" in card and "shape:" not in card and "&quot;reflect&quot;" not in card
    assert ">str<" not in card and ">f64<" not in card
    # each card links its first use of a bucket to the glossary, once
    assert card.count('data-term="f2p"') == 1 and card.count('data-term="p2p"') == 1
    assert 'href="#labkit-glossary-f2p"' in card


def test_a_rounds_raw_reply_is_on_its_card():
    from labkit.experiments import cache_isolation as cache_case
    from labkit.views.step_card import step_html

    trace = cache_case.try_patch("the key ignores the user", cache_case.PATCH_TEMPLATE)
    view = step_view(trace, 1, CASE.suite)
    assert view.raw == cache_case.PATCH_TEMPLATE
    assert "Raw reply</b> (" in step_html(view) and "what must the key contain?" in step_html(view)

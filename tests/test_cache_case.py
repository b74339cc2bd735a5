"""Worked example A, asserted from a real run (a pytest subprocess per candidate)."""

import os
import subprocess
import sys

import pytest

from labkit.core import patch as patches
from labkit.core.types import Decision
from labkit.experiments import cache_isolation as cache_case
from labkit.record.ledger import Ledger

LEDGER = Ledger()


@pytest.fixture(scope="module")
def compared():
    return cache_case.compare(ledger=LEDGER)


def test_the_table_is_one_round_of_the_engine(compared):
    import json

    frame = LEDGER.frame("cache-compare")
    verify = frame.filter(frame["kind"] == "verify")
    assert verify["round"].to_list() == [0, 1, 1, 1]  # v1, then the three rivals, same validator
    (decide,) = [json.loads(d) for d in frame.filter(frame["kind"] == "decide")["detail"]]
    assert [c["name"] for c in decide["children"]] == ["composite_key", "disable_cache", "five_changes"]
    assert [c["rule"] for c in decide["children"]] == ["resolved", "protective", "patch-size"]


def test_the_chapter_table_comes_out_of_the_run(compared):
    table, _ = compared
    rows = {r["candidate"]: r for r in table.iter_rows(named=True)}
    v1 = rows["v1 single key (product_id)"]
    v2 = rows["v2 composite key (user_id, product_id)"]
    off = rows["alternative: disable the cache"]
    assert (v1["isolation"], v1["same-user hit"], v1["decision"]) == ("0/2", "2/2", "reflect")
    assert (v2["isolation"], v2["same-user hit"], v2["decision"]) == ("2/2", "2/2", "keep")
    assert (off["isolation"], off["same-user hit"], off["decision"]) == ("2/2", "0/2", "roll back")


def test_the_page_shows_the_recorded_table_and_it_is_what_the_engine_measures_now(compared):
    from recordings import assert_as_recorded

    from labkit.views import cache_page

    record = cache_case.compare_record()
    assert_as_recorded(compared[0], cache_case.recorded_table(), record, "the cache chapter's table")
    assert record["command"] == cache_case.COMPARE_COMMAND and "recorded real run" in record["label"]
    shown = cache_page.chapter_table_html()
    assert "alternative: disable the cache" in shown and record["label"] in shown and record["command"] in shown


def test_failing_tests_alone_cannot_tell_the_two_patches_apart(compared):
    _, rows = compared
    v2, off = rows[1].verdict, rows[2].verdict
    # On the failing acceptance alone both patches score 100%…
    assert v2.score("acceptance") == off.score("acceptance") == (2, 2)
    # …only the protective tests separate them.
    assert v2.score("protective") == (2, 2) and off.score("protective") == (0, 2)


def test_five_change_patch_is_green_but_not_attributable(compared):
    _, rows = compared
    five = rows[3]
    assert five.verdict.resolved
    assert five.decision.decision is Decision.ROLL_BACK and five.decision.rule == "patch-size"


def test_the_leak_itself():
    served = cache_case.leak_demo()
    assert served == [("alice", "p1", 100, 100), ("bob", "p1", 100, 80)]  # bob is served alice's price
    c = cache_case.case()
    fixed = cache_case.leak_demo(patches.apply(c.start, c.patch("composite_key")))
    assert [(u, price) for u, _, price, _ in fixed] == [("alice", 100), ("bob", 80)]


def test_the_scripted_main_branch_observes_then_keeps():
    ledger = Ledger()
    trace = cache_case.run("main", ledger=ledger)
    assert trace.simulated and trace.reflector.startswith("scripted")
    (rnd,) = trace.rounds
    assert len(rnd.observations) == 1 and "'p1'" in rnd.observations[0].output  # both users get key 'p1'
    assert rnd.decision.decision is Decision.KEEP and trace.final_verdict.resolved
    assert "experiment" in ledger.frame(trace.run_id)["kind"].to_list()
    lesson = cache_case.distill(trace)
    assert "tenant boundary" in lesson.lesson and lesson.source.startswith(f"run {trace.run_id}")
    assert "user_id" in lesson.rejected[0][0]


@pytest.mark.parametrize(
    ("branch", "decisions"),
    [
        ("tempting", [Decision.ROLL_BACK, Decision.KEEP]),
        ("five", [Decision.ROLL_BACK, Decision.KEEP]),
        (
            "invalid",
            [Decision.INVESTIGATE, Decision.INVESTIGATE, Decision.INVESTIGATE, Decision.KEEP],
        ),
    ],
)
def test_scripted_branches(branch, decisions):
    trace = cache_case.run(branch)
    assert [r.decision.decision for r in trace.rounds] == decisions
    assert trace.final_verdict.resolved


def test_invalid_branch_explains_each_failure():
    reasons = [r.decision.reason for r in cache_case.run("invalid").rounds[:3]]
    assert "missing hypothesis" in reasons[0]
    assert "not one hypothesis" in reasons[1]
    assert "does not apply" in reasons[2]


def test_scripted_storylines_never_read_labkit_model(monkeypatch):
    # A real provider named in the shell, with no key: the scripted storyline must not call it.
    monkeypatch.setenv("LABKIT_MODEL", "openai/gpt-4o-mini")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert cache_case.reflector("tempting").model == cache_case.OFFLINE_MODEL
    trace = cache_case.run("main")
    assert trace.simulated and trace.reflector.startswith("scripted")
    assert trace.final_verdict.resolved
    lesson = cache_case.lesson(trace)
    assert lesson is not None and "tenant boundary" in lesson.lesson
    # only an explicit model (the real-model controls pass one) asks a model
    assert cache_case.reflector("main", "openai/gpt-4o-mini").model == "openai/gpt-4o-mini"


def test_a_scripted_storyline_never_imports_litellm():
    # The storyline replays its transcript in this process: litellm (seconds to import) stays out,
    # so a notebook that calls no model renders without it.
    code = (
        "import sys\n"
        "from labkit.experiments import cache_isolation as c\n"
        "t = c.run('main')\n"
        "assert t.simulated and t.final_verdict.resolved and c.lesson(t) is not None\n"
        "print('litellm' in sys.modules)\n"
    )
    env = {**os.environ, "LABKIT_MODEL": "openai/gpt-4o-mini"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "False", "the scripted storyline imported litellm"


def test_a_run_that_does_not_resolve_has_no_lesson_and_no_error():
    trace = cache_case.run("invalid", max_rounds=2)  # two unusable reflections, then out of rounds
    assert not trace.final_verdict.resolved
    assert cache_case.lesson(trace) is None
    assert cache_case.NO_LESSON == "no verified correction, so no lesson"


def test_try_your_own_patch_goes_through_the_same_validator_and_decision():
    from labkit.views.report import step_view

    composite = cache_case.case().patch("composite_key").diff
    kept = cache_case.try_patch("the cache key ignores the user", composite)
    (rnd,) = kept.rounds
    assert rnd.decision.decision is Decision.KEEP and kept.final_verdict.resolved
    assert kept.reflector.startswith("you") and not kept.simulated
    card = step_view(kept, 1, cache_case.case().suite)
    assert card.decision == "keep" and "2 now pass" in card.changed
    assert card.record and card.record["hypothesis"]["cause"] == "the cache key ignores the user"

    # the template changes only a comment: tested, fixes nothing, rolled back
    (same,) = cache_case.try_patch("the key ignores the user", cache_case.PATCH_TEMPLATE).rounds
    assert same.retest is not None and same.decision.decision is Decision.ROLL_BACK

    # disabling the cache: the protective tests catch it, as in the scripted storyline
    off = cache_case.case().patch("disable_cache").diff
    (rnd,) = cache_case.try_patch("the cache is wrong", off).rounds
    assert rnd.decision.decision is Decision.ROLL_BACK and "protective" in rnd.decision.reason


def test_try_your_own_patch_explains_what_it_cannot_test():
    composite = cache_case.case().patch("composite_key").diff
    (no_hyp,) = cache_case.try_patch("   ", composite).rounds
    assert no_hyp.decision.decision is Decision.INVESTIGATE and "hypothesis" in no_hyp.decision.reason
    assert no_hyp.retest is None
    (bad,) = cache_case.try_patch("key ignores user", "return (user_id, product_id)").rounds
    assert bad.decision.decision is Decision.INVESTIGATE and "does not apply" in bad.decision.reason
    protected = "--- a/tests/test_isolation.py\n+++ b/tests/test_isolation.py\n@@ -1 +1 @@\n-x\n+y\n"
    (alarm,) = cache_case.try_patch("the tests are wrong", protected).rounds
    assert alarm.decision.decision is Decision.STOP and "protected" in alarm.decision.reason


def test_a_patch_that_does_not_import_shows_pythons_error_on_its_card():
    from labkit.views.report import import_error, step_view
    from labkit.views.step_card import step_html

    broken = (
        cache_case.case()
        .patch("composite_key")
        .diff.replace("+        return (user_id, product_id)", "+        return (user_id, product_id")
    )
    trace = cache_case.try_patch("the cache key ignores the user", broken)
    (rnd,) = trace.rounds
    assert rnd.retest is not None and import_error(rnd.retest).endswith("SyntaxError: '(' was never closed")
    card = step_view(trace, 1, cache_case.case().suite)
    assert card.error.splitlines()[0].strip() == 'File "pricing.py", line 28' and "/tmp/" not in card.error
    page = step_html(card)
    assert "The patched code does not import" in page and "return (user_id, product_id" in page
    # the evidence lists the four tests, not the two files that failed to import (no empty-bucket rows)
    assert card.evidence.height == 4 and "" not in card.evidence["bucket"].to_list()
    # a patch that imports shows no error box
    kept = cache_case.try_patch("the cache key ignores the user", cache_case.case().patch("composite_key").diff)
    assert step_view(kept, 1, cache_case.case().suite).error == ""


def test_an_empty_hypothesis_is_told_in_plain_words():
    from labkit.loop.strategies.handwritten import NO_HYPOTHESIS

    (no_hyp,) = cache_case.try_patch("", cache_case.case().patch("composite_key").diff).rounds
    assert NO_HYPOTHESIS in no_hyp.decision.reason and "restatement" not in no_hyp.decision.reason

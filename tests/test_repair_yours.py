"""Try your own patch on a repair case: one round of the repair run, with real pytest validation."""

from __future__ import annotations

import ast
import json

import pytest

from labkit.core import patch as patches
from labkit.core.errors import PatchError
from labkit.core.types import Decision, Patch
from labkit.experiments import repair, repair_yours
from labkit.views import diminishing as page

CASES = {c.id: c for c in repair.load_cases()}
FLATTEN = CASES["flatten"]
HYPOTHESIS = "hasattr(x, '__iter__') treats strings as sequences to flatten"


def _round(result: repair.RepairRun, case: repair.RepairCase):
    (rnd,) = result.traces[case.id].rounds
    return rnd


def test_the_correct_patch_is_kept_and_the_hidden_tests_score_it_after_the_decision():
    result = repair_yours.try_patch(FLATTEN, HYPOTHESIS, FLATTEN.patch("fix").patch.diff)
    rnd = _round(result, FLATTEN)
    assert rnd.decision.decision is Decision.KEEP and rnd.retest is not None and rnd.retest.resolved
    # the same run settings as the repair experiment: its decide mode, its (absent) cap
    start = json.loads(result.events().filter(kind="start")["detail"][0])
    assert start["keep"] == "no_worse" and start["rules"] == []
    assert not result.tasks[0].patch_cap and result.tasks[0].hidden is FLATTEN.hidden
    hidden = repair_yours.hidden(result, FLATTEN.id)
    assert not hidden.correct_before and hidden.before_failing == (
        "tests/test_hidden.py::test_bytes_and_dicts_are_atoms",
    )
    assert hidden.correct_after and hidden.after_failing == () and hidden.after_decision
    card = page.yours_html(result, FLATTEN)
    assert "Round 1: keep" in card and "1 now pass (test_strings_are_atoms)" in card
    assert HYPOTHESIS.replace("'", "&#x27;") in card
    assert card.index("Hidden tests") > card.index(">keep</span>")  # after the decision
    assert "after the decision: all pass (correct)" in card


def test_a_patch_that_breaks_a_protective_test_is_rolled_back():
    result = repair_yours.try_patch(FLATTEN, HYPOTHESIS, FLATTEN.patch("one_level").patch.diff)
    rnd = _round(result, FLATTEN)
    assert rnd.decision.decision is Decision.ROLL_BACK and "protective" in rnd.decision.reason
    assert result.final[FLATTEN.id] == "original"
    card = page.yours_html(result, FLATTEN)
    assert "Round 1: roll back" in card and "now fail (test_deep)" in card


def test_a_plausible_wrong_patch_is_kept_and_only_the_hidden_tests_show_it():
    result = repair_yours.try_patch(FLATTEN, HYPOTHESIS, FLATTEN.patch("not_str").patch.diff)
    assert _round(result, FLATTEN).decision.decision is Decision.KEEP
    hidden = repair_yours.hidden(result, FLATTEN.id)
    assert not hidden.correct_after and "test_bytes_and_dicts_are_atoms" in hidden.line()


@pytest.mark.parametrize(
    "diff",
    [
        "return isinstance(x, (list, tuple))",  # no file header at all
        repair_yours.template(FLATTEN).replace(" def flatten(items):", " def flat(items):"),  # wrong context
        "--- a/flatten.py\n+++ b/flatten.py\n@@ one @@\n-x\n+y\n",  # malformed hunk header
    ],
)
def test_a_malformed_diff_gives_the_parsers_named_error_in_the_card_and_nothing_is_tested(diff):
    with pytest.raises(PatchError) as raised:
        patches.apply(FLATTEN.original, Patch(diff, "yours"))
    result = repair_yours.try_patch(FLATTEN, HYPOTHESIS, diff)
    rnd = _round(result, FLATTEN)
    assert rnd.decision.decision is Decision.INVESTIGATE and rnd.retest is None
    assert rnd.decision.reason == f"patch does not apply: {raised.value}"
    card = page.yours_html(result, FLATTEN)
    assert "keep investigating" in card and "patch does not apply" in card


def test_an_empty_hypothesis_and_an_edit_of_the_tests_are_refused_not_raised():
    (no_hyp,) = repair_yours.try_patch(FLATTEN, "  ", FLATTEN.patch("fix").patch.diff).traces[FLATTEN.id].rounds
    assert no_hyp.decision.decision is Decision.INVESTIGATE and "hypothesis" in no_hyp.decision.reason
    tests = "--- a/tests/test_visible.py\n+++ b/tests/test_visible.py\n@@ -1 +1 @@\n-x\n+y\n"
    (alarm,) = repair_yours.try_patch(FLATTEN, HYPOTHESIS, tests).traces[FLATTEN.id].rounds
    assert alarm.decision.decision is Decision.STOP and "protected" in alarm.decision.reason


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_every_template_applies_changes_only_a_comment_and_is_not_the_fix(case_id):
    case = CASES[case_id]
    diff = repair_yours.template(case)
    after = patches.apply(case.original, Patch(diff, "template")).files[case.module]
    before = case.original.files[case.module]
    assert after != before and repair_yours.EDIT_HINT in after
    assert ast.dump(ast.parse(after)) == ast.dump(ast.parse(before))  # behaviour unchanged
    fixes = [p for p in case.patches if p.kind == "fix"]
    if fixes:  # the hint sits on a line the fix changes
        removed = [ln[1:] for ln in fixes[0].patch.diff.splitlines() if ln.startswith("-") and not ln.startswith("---")]
        hinted = next(ln for ln in after.splitlines() if repair_yours.EDIT_HINT in ln)
        assert hinted.replace(f"  {repair_yours.EDIT_HINT}", "") in removed or not removed


def test_the_case_shows_its_buggy_source_and_visible_tests_with_the_failing_ones_named():
    md = page.yours_case_md(FLATTEN)
    assert FLATTEN.original.files["flatten.py"] in md and "`test_strings_are_atoms`" in md
    assert str(FLATTEN.visible.tests["tests/test_visible.py"]) in md
    assert "test_hidden" not in md  # the hidden tests are never shown
    choices = page.yours_choices(list(CASES.values()))
    assert sorted(choices.values()) == sorted(CASES) and not CASES[next(iter(choices.values()))].initially_correct

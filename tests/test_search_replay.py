"""Stepping through a recorded search: the accounts per step come from the ledger."""

from __future__ import annotations

import pytest

from labkit.grading.sealed import load_search_case
from labkit.grading.validator import Validator
from labkit.grading.verdicts import Checker
from labkit.loop.search.recorded import Sweep, steps, sweep
from labkit.record.ledger import Ledger
from labkit.views.search_pages import (
    outcome_words,
    search_browser,
    shown_sweep,
    spend_md,
    step_page,
    sweep_chart,
    sweep_frame,
)


@pytest.fixture(scope="module")
def runs() -> dict[float, Sweep]:
    case = load_search_case("api_change")
    checker = Checker(Validator())
    baseline = checker.check(case.case.start, case.suite).verdict
    return {s.total: s for s in sweep(case, checker, baseline, [13, 14, 15], reserve=2)}


def test_each_step_carries_the_accounts_as_they_stood(runs: dict[float, Sweep]) -> None:
    st = runs[15].steps
    kinds = [s.kind for s in st]
    assert kinds[0] == "define" and kinds[-1] == "stop" and kinds.count("branch") == 3
    assert [(s.search_spent, s.held) for s in st if s.kind == "branch"] == [(6, 2), (9, 2), (12, 2)]
    end = st[-1]
    assert (end.search_spent, end.confirm_spent, end.left, end.held) == (12, 2, 1, 0)
    assert end.sealed == ("C fix the callers",)
    # the budget stop: recorded where it happened, with no error class (it is no POLICY_DENIED refusal)
    assert (end.decisions[0]["where"], end.decisions[0]["error_class"]) == ("budget", "")


def test_the_sweep_shows_where_the_task_turns_incomplete(runs: dict[float, Sweep]) -> None:
    frame = sweep_frame(list(runs.values()))
    assert frame["status"].to_list() == ["incomplete", "success", "success"]
    assert frame.filter(frame["total"] == 13)["reason"].item() == "budget_exhausted"
    sweep_chart(list(runs.values()), chosen=14).to_dict()  # a valid Vega-Lite spec


def test_outcomes_and_what_is_left_are_said_in_words(runs: dict[float, Sweep]) -> None:
    # a confirmed candidate is a success, whatever stopped the search; the reason is said apart from it
    assert outcome_words("success", "budget_exhausted").startswith("success: a sealed candidate was confirmed (")
    assert "(" not in outcome_words("incomplete", "budget_exhausted") and "budget" in outcome_words(
        "incomplete", "budget_exhausted"
    )
    shown = shown_sweep(list(runs.values()))
    assert not any("budget_exhausted" in o or "(budget" in o for o in shown["outcome"])
    # at 13 the search stops with 4 unspent: 2 still spendable on search but too few to execute
    # route C *and* verify it (so C is not run at all), and the 2 reserved for confirmation
    end = runs[13].steps[-1]
    assert (end.left, end.search_left, end.held) == (4, 2, 2)
    said = spend_md(runs[13])
    assert "**4** unspent: 2 spendable on search, 2 still reserved for confirmation" in said
    assert "ended **incomplete: " in said
    labels = search_browser(runs[15]).labels
    assert labels[2:5] == ["A: frontier", "B: not expanded", "C: sealed"] and "branch" not in labels
    assert step_page(runs[15].steps[-1]).count("budget_exhausted") == 0


def test_pages_show_budget_tree_seal_and_decisions(runs: dict[float, Sweep]) -> None:
    page = step_page(runs[15].steps[-1])
    for text in (
        "limit 15",
        "<b>search</b> 12",
        "<b>confirm</b> 2",
        "sealed</b>: C fix the callers",
        "not expanded",
        "budget exhausted</b>: stop",
        "test_user_records_are_frozen [high]",
    ):
        assert text in page, text


def test_a_run_without_a_search_is_refused() -> None:
    with Ledger() as led, pytest.raises(ValueError, match="has no search"):
        steps(led, "nothing", load_search_case("api_change").checks)


def test_a_reopened_sweep_reuses_its_dev_check_verdicts_and_spends_the_same(runs, tmp_path) -> None:
    """The notebook keeps its dev-check verdicts in build/ (grading.verdicts.build_checker): on
    reopening no dev check runs again, the sealed final set still runs for every confirmation, and
    every step's accounts are what a fresh checker gives (costs are the case's declared units)."""
    from labkit.grading.verdicts import build_checker

    case = load_search_case("api_change")

    def reopen() -> tuple[dict[float, Sweep], int, int]:
        checker = build_checker("search_budget", tmp_path)
        confirms_before = _confirm_runs[0]
        baseline = checker.check(case.case.start, case.suite).verdict
        out = {s.total: s for s in sweep(case, checker, baseline, [13, 14, 15], reserve=2)}
        checker.cache.save()
        return out, checker.runs, _confirm_runs[0] - confirms_before

    _confirm_runs = [0]
    original = Validator.run

    def counting(self: Validator, candidate, suite, **kw):  # type: ignore[no-untyped-def]
        if suite.name.endswith("(sealed)"):
            _confirm_runs[0] += 1
        return original(self, candidate, suite, **kw)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Validator, "run", counting)
        first, first_checks, first_confirms = reopen()
        again, again_checks, again_confirms = reopen()
    assert first_checks > 0 and again_checks == 0
    assert again_confirms == first_confirms > 0  # the sealed set is never cached
    for total, s in runs.items():
        accounts = [
            [(st.kind, st.search_spent, st.confirm_spent, st.left, st.held) for st in r[total].steps]
            for r in (first, again)
        ]
        fresh = [(st.kind, st.search_spent, st.confirm_spent, st.left, st.held) for st in s.steps]
        assert accounts == [fresh, fresh]
        assert again[total].result.status == s.result.status

"""Stepping through a recorded search: the accounts per step come from the ledger."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from recordings import assert_as_recorded, what_happened

from labkit.core.errors import SearchError
from labkit.experiments import search_recording
from labkit.grading.sealed import load_search_case
from labkit.grading.validator import Validator
from labkit.grading.verdicts import Checker, VerdictCache
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

ROOT = Path(__file__).resolve().parents[1]


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


# how an event was obtained or how long it took, not what happened (a cache hit, seconds), and
# what names the machine (the validator id digests the interpreter's path; verdict digests use it)
_WORKSPACE = re.compile(r"/tmp/ws-[0-9a-f]+")
_WALL = re.compile(r"wall_seconds=[0-9.e-]+")
_SEAL = re.compile(r"seal [0-9a-f]{16}")
_ASIDE = {"cached", "wall_seconds", "seconds", "digest", "validator", "environment"}


def _content(value: Any) -> Any:
    # a test's message names the run's own fresh workspace; a budget message, its seconds
    return what_happened(value, _ASIDE, lambda t: _WALL.sub("wall_seconds=<s>", _WORKSPACE.sub("<workspace>", t)))


def _events(ledger: Ledger, run_id: str) -> list[dict[str, Any]]:
    """Every event of `run_id`, in ledger order, timings and the machine aside."""
    return [
        {
            "round": e.round,
            "role": e.role,
            "kind": e.kind,
            "cost_units": e.cost_units,
            "detail": _content(e.detail),
            "evidence": _content(json.loads(e.evidence) if isinstance(e.evidence, str) and e.evidence else e.evidence),
        }
        for e in ledger.events(run_id)
    ]


def test_the_recorded_sweep_is_what_the_search_gives_now(runs: dict[float, Sweep]) -> None:
    """notebooks/search_budget opens on data/search_budget/sweep.*: three of its totals, searched
    now with fresh pytest runs, give every recorded event, step and outcome (timings aside)."""
    case = load_search_case("api_change")
    meta = json.loads(search_recording.RECORD.with_suffix(".json").read_text(encoding="utf-8"))
    assert (
        meta["command"]
        == f"python -m labkit.experiments.search_recording --out {search_recording.RECORD.relative_to(ROOT)}"
    )
    assert meta["pytest_runs"] >= 4 and meta["totals"] == [f"{t:g}" for t in range(10, 23)]
    shown = search_recording.recorded(case)
    assert shown is not None
    by_total = {s.total: s for s in shown}
    assert list(by_total) == [float(t) for t in range(10, 23)]
    for total, live in runs.items():
        rec = by_total[total]
        rid = search_recording.run_id(total)
        assert rec.ledger is not None and live.ledger is not None
        recorded_events = _events(rec.ledger, rid)
        assert len(recorded_events) > 20
        assert_as_recorded(_events(live.ledger, rid), recorded_events, meta, f"the recorded search at {total:g}")
        # read back as the page reads the recording (its states named in the recorded environment),
        # every step is the same; a seal's digest names the validator that verified it (its id digests
        # this machine's interpreter path), so it is left out like the events' validator ids
        now = steps(live.ledger, rid, case.checks, meta["environment"])
        assert [(s.kind, _SEAL.sub("seal <digest>", s.title), s.search_spent, s.confirm_spent) for s in rec.steps] == [
            (s.kind, _SEAL.sub("seal <digest>", s.title), s.search_spent, s.confirm_spent) for s in now
        ]
        assert (rec.result.status, rec.result.reason, rec.result.confirmed) == (
            live.result.status, live.result.reason, live.result.confirmed,
        )  # fmt: skip
    # where the task turns incomplete, as the page says: 10-13 incomplete, 14 and up confirmed
    assert {t: s.result.status for t, s in by_total.items()} == {
        float(t): "incomplete" if t < 14 else "success" for t in range(10, 23)
    }


def test_the_page_opens_on_the_recording_while_the_case_is_as_recorded(tmp_path) -> None:
    case = load_search_case("api_change")
    opened = search_recording.open_sweep(case, checker=_refuse_to_check())
    assert opened.recorded and opened.note == search_recording.RECORDED_NOTE
    assert opened.totals == [float(t) for t in range(10, 23)]
    assert [r.nodeid.split("::")[-1] for r in opened.baseline.evidence.failures]  # the start fails dev checks
    # the case edited since (any file of its folder): the recording is not read
    changed = tmp_path / "api_change"
    shutil.copytree(case.case.root, changed)
    (changed / "tests" / "test_extra.py").write_text("def test_new():\n    assert True\n")
    edited = replace(case, case=replace(case.case, root=changed))
    assert search_recording.fingerprint(edited) != search_recording.fingerprint(case)
    assert search_recording.recorded(edited) is None


def _refuse_to_check() -> Checker:
    class Refusing(Checker):
        def check(self, *a: Any, **kw: Any) -> Any:
            raise AssertionError("the page opened on the recording must not validate anything")

    return Refusing(Validator())


def test_without_a_recording_the_page_searches_now_and_says_so(tmp_path) -> None:
    case = load_search_case("api_change")
    checker = Checker(Validator(), cache=VerdictCache(tmp_path / "verdicts.json"))
    opened = search_recording.open_sweep(case, tmp_path / "none.sqlite", checker)
    assert not opened.recorded and opened.note == search_recording.LIVE_NOTE
    assert opened.totals == [float(t) for t in range(10, 23)] and checker.runs > 0  # validated for real
    assert {t: s.result.status for t, s in opened.runs.items()} == {
        float(t): "incomplete" if t < 14 else "success" for t in range(10, 23)
    }


def test_a_damaged_recording_is_named_and_a_failed_recording_keeps_the_last_one(tmp_path, monkeypatch) -> None:
    case = load_search_case("api_change")
    out = tmp_path / "sweep.sqlite"
    shutil.copy(search_recording.RECORD, out)
    meta = json.loads(search_recording.RECORD.with_suffix(".json").read_text(encoding="utf-8"))
    broken = {k: v for k, v in meta.items() if k != "environment"}
    out.with_suffix(".json").write_text(json.dumps(broken), encoding="utf-8")
    with pytest.raises(SearchError, match=r"sweep\.json: not a search recording \(KeyError"):
        search_recording.recorded(case, out)
    out.with_suffix(".json").write_text(json.dumps({**meta, "totals": [*meta["totals"], "99"]}), encoding="utf-8")
    with pytest.raises(SearchError, match="lists total 99 but its ledger says"):
        search_recording.recorded(case, out)

    # a recording that fails half-way leaves the previous one, ledger and .json, as they were
    out.with_suffix(".json").write_text(json.dumps(meta), encoding="utf-8")
    before = (out.read_bytes(), out.with_suffix(".json").read_text(encoding="utf-8"))
    calls = []

    def failing(*a: Any, **kw: Any) -> Any:
        calls.append(kw["total"])
        if len(calls) == 3:
            raise KeyboardInterrupt  # as a user's Ctrl-C would
        return real(*a, **kw)

    real = search_recording.search
    monkeypatch.setattr(search_recording, "search", failing)
    with pytest.raises(KeyboardInterrupt):
        search_recording.record(out)
    assert (out.read_bytes(), out.with_suffix(".json").read_text(encoding="utf-8")) == before
    assert search_recording.recorded(case, out) is not None

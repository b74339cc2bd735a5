"""The Reflexion ladder: the recording re-measured on a slice, its candidates, causes and the CLI."""

from __future__ import annotations

import json
import re
import sys
import types
from dataclasses import asdict, dataclass

import polars as pl
import pytest
from recordings import assert_as_recorded

from labkit.experiments.published import __main__ as published_cli
from labkit.experiments.published import ladder as lad
from labkit.experiments.published import reflexion_logs as rx
from labkit.experiments.published import regrade as rg
from labkit.grading.acceptance import AcceptanceSuite

ROWS, META = lad.load_recording()
SLICE_RUNS = ("reflexion-humaneval", "simple-humaneval")
SLICE_RUNGS = ("own_tests", "check")


def _slice_tasks() -> list[str]:
    """Three HumanEval problems: a disagreement with the log (if any) and two agreeing ones."""
    found = [d.task_id for d in lad.disagreements(ROWS) if d.run in SLICE_RUNS]
    picked = found[:1] + ["HumanEval/0", "HumanEval/32"]
    return list(dict.fromkeys(picked))[:3]


def test_a_slice_regraded_now_equals_the_recording() -> None:
    tasks = _slice_tasks()
    now = rg.regrade(SLICE_RUNS, SLICE_RUNGS, tasks, workers=2).grades
    key = {(g.run, g.task_id, g.rung) for g in now}
    assert len(now) == len(key) == 2 * 2 * len(tasks)
    recorded = sorted((r for r in ROWS if (r["run"], r["task_id"], r["rung"]) in key), key=str)
    assert_as_recorded(sorted((asdict(g) for g in now), key=str), recorded, META, "the re-graded slice")


def test_the_differential_rungs_regraded_now_equal_the_recording() -> None:
    # HumanEval/1 fails the raw differential suite only on inputs its docstring rules out (the
    # contract: balanced groups), so it separates the two rungs; /0 passes both.
    rungs = ("differential_raw", "differential_contract")
    now = rg.regrade(("reflexion-humaneval",), rungs, ["HumanEval/0", "HumanEval/1"], workers=2).grades
    got = {(g.task_id, g.rung): g.passed for g in now}
    assert got == {
        ("HumanEval/0", "differential_raw"): True,
        ("HumanEval/0", "differential_contract"): True,
        ("HumanEval/1", "differential_raw"): False,
        ("HumanEval/1", "differential_contract"): True,
    }
    key = {(g.run, g.task_id, g.rung) for g in now}
    recorded = sorted((r for r in ROWS if (r["run"], r["task_id"], r["rung"]) in key), key=str)
    assert_as_recorded(sorted((asdict(g) for g in now), key=str), recorded, META, "the re-graded slice")
    assert "counterexample" in next(g.reason for g in now if not g.passed)


def test_the_ladder_headline_counts() -> None:
    # The README's ladder table (and the note's): rung 3 `check` vs rung 4 on HumanEval+-style
    # inputs, raw and within each problem's input contract.
    def passed(run: str, rung: str) -> int:
        return sum(r["passed"] for r in ROWS if r["run"] == run and r["rung"] == rung)

    assert [passed("reflexion-humaneval", g) for g in ("check", "differential_raw", "differential_contract")] == [
        150,
        121,
        136,
    ]
    assert [passed("simple-humaneval", g) for g in ("check", "differential_raw", "differential_contract")] == [
        140,
        114,
        126,
    ]
    assert (passed("reflexion-mbpp", "check"), passed("simple-mbpp", "check")) == (311, 324)


def test_every_recorded_candidate_is_a_logged_solution_and_every_one_is_graded() -> None:
    logged = {(r["run"], r["task_id"]) for r in rx.load_runs().to_dicts()}
    assert {(r["run"], r["task_id"]) for r in ROWS} <= logged
    rows = {(r["run"], r["task_id"], r["rung"]) for r in ROWS}
    assert len(rows) == len(ROWS)  # one row per (run, task, rung)
    for run, task in logged:
        rungs = ("own_tests", "visible", "check") if run.endswith("humaneval") else ("check",)
        assert all((run, task, rung) in rows for rung in rungs), (run, task)
    assert all(r["reason"] == "" if r["passed"] else r["reason"] for r in ROWS)


def test_every_disagreement_with_the_log_has_a_stated_cause() -> None:
    found = lad.disagreements(ROWS)
    assert all(d.cause and d.evidence for d in found), [d for d in found if not d.cause]
    written = json.loads((rx.tables_dir() / "disagreements.json").read_text())["disagreements"]
    assert {(d["run"], d["task_id"], d["labkit"], d["logged"]) for d in written} == {
        (d.run, d.task_id, d.labkit, d.logged) for d in found
    }  # none missing, none stale


def test_differential_rungs_plug_in_by_name_or_say_not_computed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    problem = rx.load_problems().row(0, named=True)
    monkeypatch.setitem(sys.modules, "labkit.grading.differential", None)  # absent
    for rung in ("differential_raw", "differential_contract"):
        got = rg.rung_suite(rung, problem, {})
        assert isinstance(got, rg.Unavailable) and got.status == "not computed"

    @dataclass(frozen=True)
    class Suite:
        task_id: str
        files: dict[str, str]
        tests: tuple[str, ...]
        inputs_total: int = 1
        inputs_kept: int = 1

    seen = []

    def differential_suite(task_id: str, *, contract: bool) -> Suite:
        seen.append((task_id, contract))
        return Suite(task_id, {"tests/test_d.py": "def test_x():\n    pass\n"}, ("tests/test_d.py::test_x",))

    fake = types.ModuleType("labkit.grading.differential")
    fake.differential_suite = differential_suite  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "labkit.grading.differential", fake)
    got = rg.rung_suite("differential_contract", problem, {})
    assert isinstance(got, AcceptanceSuite) and got.fail_to_pass == ("tests/test_d.py::test_x",)
    assert seen == [("HumanEval/0", True)]
    mbpp = rx.load_problems().filter(pl.col("benchmark") == "mbpp").row(0, named=True)
    assert rg.rung_suite("differential_raw", mbpp, {}) == rg.Unavailable(
        "not available", "no canonical solution to compare with (MBPP here has none)"
    )


def test_ladder_json_counts_the_recording(capsys: pytest.CaptureFixture[str]) -> None:
    assert published_cli.main(["ladder", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out) == list(rx.RUNS)
    for run, entry in out.items():
        for rung in rg.RUNGS:
            mine = [r for r in ROWS if r["run"] == run and r["rung"] == rung]
            cell = entry[rung]
            if mine:
                assert (cell["passed"], cell["total"]) == (
                    sum(r["passed"] for r in mine),
                    len(mine),
                )
            else:  # never a silent gap: the rung says why it has no verdicts
                assert cell["total"] is None and cell["status"].startswith(("not available", "not computed"))
        found = [d for d in lad.disagreements(ROWS) if d.run == run]
        assert [d["task_id"] for d in entry["disagreements_with_log"]] == [d.task_id for d in found]
    assert out["reflexion-mbpp"]["visible"]["status"].startswith("not available")
    assert out["reflexion-humaneval"]["logged"] == {"passed": 150, "total": 164}


def test_ladder_table_for_people(capsys: pytest.CaptureFixture[str]) -> None:
    assert published_cli.main(["ladder"]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0].startswith("run | logged is_solved | own_tests | visible | check")
    assert "published run, re-graded by labkit" in text.lower()


def test_the_sum_shadowing_cause_holds_in_the_logs() -> None:
    # disagreements.json's main cause, checked against the logs: once mbpp_126_sum's prompt
    # (`def sum(a, b)`) was exec'd into the authors' shared globals, no later solution calling
    # the builtin sum(...) was logged solved, in either MBPP run; before it, such solutions were.
    calls_sum = re.compile(r"(?<![\w.])sum\(")
    runs = rx.load_runs()
    for run in ("reflexion-mbpp", "simple-mbpp"):
        rows = runs.filter(pl.col("run") == run).to_dicts()
        at = next(i for i, r in enumerate(rows) if r["task_id"] == "mbpp_126_sum")
        before = [r["is_solved"] for r in rows[:at] if calls_sum.search(r["solution"])]
        after = [r["is_solved"] for r in rows[at + 1 :] if calls_sum.search(r["solution"])]
        assert len(after) >= 9 and not any(after)  # 0 of 9 (Reflexion), 0 of 10 (single-shot)
        assert sum(before) > len(before) / 2  # 8 of 9, 7 of 10


def test_the_readme_counts() -> None:
    # README's "Published runs, re-graded" section states these.
    assert len(lad.disagreements(ROWS)) == 12 and len({(r["run"], r["task_id"]) for r in ROWS}) == 1122
    assert len(META["import_only_visible"]) == 32
    runs = rx.load_runs().filter(pl.col("run") == "reflexion-humaneval")
    assert (
        runs.filter(pl.col("solution") == "")["task_id"].to_list()
        == runs.filter(~pl.col("is_solved"))["task_id"].to_list()
    )
    assert runs.filter(pl.col("solution") == "").height == 14

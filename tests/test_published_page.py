"""The "Published runs, re-graded" section of reflection_worth_it (labkit.views.published_page): it
renders from the committed tables alone (rungs not computed say so, never zero), from a fixture
ladder, and in both notebook twins; every figure carries the published-run label."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from labkit.experiments.published.reflexion_logs import load_runs, tables_dir
from labkit.views import published_page as published
from labkit.views.pages import chart_svg

ROOT = Path(__file__).resolve().parents[1]
RUNG_COLUMNS = list(published.RUNG_NAMES.values())


@pytest.fixture
def without_ladder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """LABKIT_DATA with the committed tables and no ladder.jsonl."""
    here = tmp_path / "published" / "reflexion"
    here.mkdir(parents=True)
    for name in ("problems.jsonl", "runs.jsonl", "self_tests.jsonl", "false_beliefs.json"):
        (here / name).symlink_to(tables_dir() / name)
    monkeypatch.setenv("LABKIT_DATA", str(tmp_path))
    return here


def test_section_renders_without_a_ladder_and_says_not_computed(without_ladder: Path) -> None:
    rows = published.ladder()
    assert rows is None
    frame = published.ladder_frame(rows)
    assert frame["run"].to_list() == [
        "reflexion-humaneval",
        "simple-humaneval",
        "reflexion-mbpp",
        "simple-mbpp",
    ]
    for col in RUNG_COLUMNS:
        assert set(frame[col].to_list()) == {"not computed"}
    assert frame["logged is_solved"].to_list()[0].startswith("150 of 164: 91.5 %")
    svg = chart_svg(published.ladder_chart(rows))
    assert "not computed" in svg and "re-graded by labkit" in svg
    wins = published.wins_frame(rows)
    he = wins.row(0, named=True)
    assert (
        he["graded by"],
        he["only Reflexion, after reflecting"],
        he["only Reflexion, no reflection (luck)"],
    ) == ("the log", "7 [2, 12]", "3 [0, 7]")
    assert wins.row(1, named=True)["both solved"] == "not computed"
    assert (
        published.LABEL in published.INTRO
        and published.LABEL in published.WINS_MD
        and published.LABEL in published.CALIBRATION_MD
    )
    refl = published.reflections_frame()
    assert refl.row(0, named=True) == {
        "run": "reflexion-humaneval",
        "reflections": 0,
        "problems": 134,
        "solved": 134,
        "pass rate": "100.0 %",
    }
    assert "96 of 164" in published.self_tests_md()
    assert "HumanEval/122" in published.beliefs_html()
    cal = published.calibration_frame(rows)
    assert "not identifiable" in cal["from the logs [95% interval]"].to_list()


def test_stepper_walks_one_problem_with_a_fixture_ladder(without_ladder: Path) -> None:
    out = []
    for run, task, ok in load_runs().select("run", "task_id", "is_solved").iter_rows():
        if run.endswith("humaneval"):
            out.append(
                {
                    "run": run,
                    "task_id": task,
                    "rung": "check",
                    "passed": ok,
                    "reason": "" if ok else "test_check: assert candidate(3) == 5",
                }
            )
    (without_ladder / "ladder.jsonl").write_text("".join(json.dumps(r) + "\n" for r in out))
    (without_ladder / "ladder.meta.json").write_text("{}")
    rows = published.ladder()
    assert rows is not None
    frame = published.ladder_frame(rows)
    assert frame.row(0, named=True)["benchmark check"].startswith("150 of 164")
    assert frame.row(2, named=True)["benchmark check"] == "not computed"  # MBPP has no row in this fixture
    choices = published.problem_choices(rows)
    assert choices[0] == "HumanEval/39"  # a Reflexion-only win after reflecting comes first
    refls = {
        t: len(r)
        for run, t, r in load_runs().select("run", "task_id", "reflections").iter_rows()
        if run == "reflexion-humaneval"
    }
    stepper = published.problem_stepper("HumanEval/127", rows)
    assert stepper.labels == ["prompt"] + [f"reflection {k}" for k in range(1, refls["HumanEval/127"] + 1)] + [
        "final solution",
        "verdicts",
    ]
    assert all(published.LABEL.replace("'", "&#x27;") in page for page in stepper.pages)
    assert "why it fails" in stepper.pages[-1] and "assert candidate(3) == 5" in stepper.pages[-1]
    assert "not computed" in stepper.pages[-1]  # the differential rungs are not in the fixture
    with pytest.raises(ValueError, match="no HumanEval problem"):
        published.problem_stepper("HumanEval/999", rows)


def test_both_twins_have_the_section_at_the_end() -> None:
    marimo = (ROOT / "notebooks" / "reflection_worth_it.py").read_text()
    nb = json.loads((ROOT / "notebooks" / "reflection_worth_it.ipynb").read_text())
    jupyter = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    calls = ("from labkit.views import published_page as published", "published.ladder_chart(", "published.wins_frame(",
             "published.reflections_frame()", "published.beliefs_html()", "published.problem_stepper(", "published.calibration_frame(")  # fmt: skip
    for call in calls:
        assert call in marimo and call in jupyter, call
    assert marimo.index("published_page") > marimo.index("glossary_html")  # added after the existing cells
    assert "published_page" in "".join(nb["cells"][-5]["source"])


def test_marimo_section_renders_headless(headless) -> None:
    got = headless("reflection_worth_it").check()
    assert got["published_label"] is True
    assert got["published_problem"] == "HumanEval/39"
    assert isinstance(got["published_steps"], int) and got["published_steps"] >= 4


def test_a_rung_that_cannot_apply_says_not_available_not_computed() -> None:
    # MBPP here has no canonical solution and no docstring examples: the recording says why those
    # rungs have no verdicts, and the table and chart say "not available", never "not computed"
    rows = published.ladder()
    assert rows, "needs the recorded ladder (python -m labkit.experiments.published regrade)"
    frame = published.ladder_frame(rows)
    mbpp = frame.filter(frame["run"] == "reflexion-mbpp").row(0, named=True)
    assert [mbpp[c] for c in RUNG_COLUMNS if c != "benchmark check"] == ["not available"] * 4
    assert mbpp["benchmark check"].startswith("311 of 397")
    he = frame.filter(frame["run"] == "reflexion-humaneval").row(0, named=True)
    assert he["differential (contract)"].startswith("136 of 164")
    svg = chart_svg(published.ladder_chart(rows))
    # 2 MBPP runs x 4 rungs labelled (each label's aria text names its note)
    assert svg.count("note: not available") == 8 and "note: not computed" not in svg

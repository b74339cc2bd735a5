"""The "is reflection worth it?" page module (shared by notebooks/reflection_worth_it.{py,ipynb}):
its tables are read from the ledger it is given, its stepper shows prompts with visible evidence
only, and the recorded real run's caption is counted from that run's ledger."""

from __future__ import annotations

import html
import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from labkit.experiments.arms import arm_metrics as metrics
from labkit.experiments.arms.run import Plan, jobs_for, merge, sweep
from labkit.record.ledger import Ledger
from labkit.views import arms_page as page
from labkit.views import arms_real as real_page
from labkit.views import arms_steps as steps

ROOT = Path(__file__).resolve().parents[1]
CASES = ["camel_to_snake", "is_palindrome"]  # one buggy, one already correct


def _ledger(arms: list[str], seeds: list[int], **sim: float) -> Ledger:
    ledger = Ledger()
    merge(ledger, sweep(Plan(sim=sim, stronger="sim"), jobs_for("repair", CASES, arms, seeds), workers=1))
    return ledger


def _solved(frame: pl.DataFrame, arm: str) -> str:
    return str(frame.filter(pl.col("arm") == page.arm_name(arm))["solved on hidden tests [95% CI]"][0]).split(" ")[0]


def test_arms_table_and_flips_come_from_the_ledger_and_change_with_it() -> None:
    never = _ledger(["direct", "reflect"], [0, 1], p_fix_blind=0.0, p_fix_evidence=0.0)
    always = _ledger(["direct", "reflect"], [0, 1], p_fix_blind=1.0, p_fix_evidence=1.0)
    for ledger in (never, always):
        frame, runs = page.arms_frame(ledger), metrics.runs(ledger)
        assert frame["arm"].to_list() == ["one draft", "reflect on failing tests"] and frame["jobs"].to_list() == [4, 4]
        spend = page.spend_frame(ledger)
        for arm in ("direct", "reflect"):  # the shown estimate is the jobs' mean hidden success
            mean = runs.filter(pl.col("arm") == arm)["correct"].cast(pl.Float64).mean()
            assert float(_solved(frame, arm)) == round(mean, 2)
            calls = runs.filter(pl.col("arm") == arm)["calls"]
            shown = spend.filter(pl.col("arm") == page.arm_name(arm))[f"calls: mean, max (limit {Plan().limit.calls})"][
                0
            ]
            mean_calls = f"{calls.mean():.0f}" if float(calls.mean()).is_integer() else f"{calls.mean():.1f}"
            assert shown == f"{mean_calls}, {calls.max():.0f}"
    # a buggy case never fixed vs always fixed; the already-correct case is right either way
    assert _solved(page.arms_frame(never), "direct") == "0.50"
    assert _solved(page.arms_frame(always), "direct") == "1.00"  # every resample agrees: no "[1.00, 1.00]"
    assert "[" not in page.arms_frame(always)["solved on hidden tests [95% CI]"][0]
    flips = page.flip_frame(always).filter((pl.col("arm") == "one draft") & (pl.col("round") == 1))
    assert flips["wrong → right"].to_list() == [2] and flips["right → wrong"].to_list() == [0]
    assert page.flip_frame(never).filter(pl.col("arm") == "one draft")["wrong → right"].sum() == 0
    more = _ledger(["direct", "reflect"], [0, 1], p_fix_blind=0.0, p_fix_evidence=0.0)
    merge(more, sweep(Plan(stronger="sim"), jobs_for("repair", CASES, ["stronger"], [0]), workers=1))
    assert page.arms_frame(more)["arm"].to_list() == ["one draft", "reflect on failing tests", "stronger model"]


def test_budget_caption_and_settings_are_read_not_assumed() -> None:
    ledger = _ledger(["direct", "reflect"], [0], p_fix_blind=1.0)
    said = page.budget_md(ledger, 2)
    assert said.startswith("**SIMULATED**") and "1.00" in said
    chart = page.arms_chart(ledger, page.SIM_TITLE).to_dict()
    assert chart["title"] == page.SIM_TITLE and "SIMULATED" in chart["title"]
    assert page.sim_settings({"rho": 0.2}) == {**{k: c.value for k, c in page.SIM.items()}, "rho": 0.2}
    with pytest.raises(ValueError, match="unknown simulated-policy parameter"):
        page.sim_settings({"p_fix": 0.5})
    with pytest.raises(ValueError, match="at least 1 call"):
        page.simulated_sweep(0)


def test_real_runs_are_shown_from_their_ledgers_and_say_what_they_solved() -> None:
    real = page.real_ledgers()
    assert {"humaneval", "repair", "humaneval-control"} <= set(real)
    intro = real_page.real_intro(real)
    assert page.REAL_MODEL in intro and "REAL" in intro and "cannot answer the question" in intro
    assert "python -m" not in intro  # commands live in the folded block, not the prose
    table = real_page.real_table(real)
    for suite, (ledger, _meta) in real.items():
        runs = metrics.runs(ledger).filter(pl.col("status") != "not available")
        text = real_page.real_md(suite, ledger)
        assert f"of {runs.height}** jobs" in text
        if not real_page.is_control(ledger) and not runs["correct"].any():
            assert "solved **0 of" in text
    for arm in ("direct", "reflect"):  # the table's counts are the ledgers' counts
        row = table.filter(pl.col("arm") == page.arm_name(arm)).row(0, named=True)
        solved = metrics.runs(real["humaneval"][0]).filter(pl.col("arm") == arm)["correct"].sum()
        assert row["HumanEval: solved"] == f"{solved} of 6"
    assert "python -m labkit.experiments.arms --suite humaneval-control" in real_page.commands_html(real)
    solved = _ledger(["direct"], [0], p_fix_blind=1.0)
    assert "solved **2 of 2** jobs" in real_page.real_md("repair", solved)  # one fixed, one already right


def test_the_control_suite_is_captioned_as_breaking_a_right_answer_not_solving() -> None:
    ledger, _ = page.real_ledgers()["humaneval-control"]
    runs = metrics.runs(ledger).filter(pl.col("status") != "not available")
    assert real_page.is_control(ledger) and runs["correct"].all() and runs["start"].all()
    text = real_page.real_md("humaneval-control", ledger)
    assert "starts from the canonical solution" in text and "breaks a right answer" in text
    assert "solved **" not in text and "solved nothing here" in text
    # which arms made no call is read from the ledger, not typed in
    silent = sorted(set(runs["arm"]) - set(runs.filter(pl.col("calls") > 0)["arm"]))
    assert silent == ["best_of_n", "direct", "reflect"]
    assert "One draft, best of n and reflect on failing tests made **0 calls**" in text
    assert f"**{int((~runs['correct']).sum())} of {runs.height}** jobs ended wrong" in text
    control = [c for c in real_page.real_table(page.real_ledgers()).columns if c.startswith("control")]
    assert control == ["control: still right (started right)"]
    # a suite that did not start right is never captioned as a control
    assert not real_page.is_control(page.real_ledgers()["humaneval"][0])


def _hidden_lines(task_hidden: str, visible: str) -> list[str]:
    lines = [ln.strip() for ln in task_hidden.splitlines() if len(ln.strip()) > 12]
    return [ln for ln in lines if ln not in visible and ("assert" in ln or "candidate(" in ln)]


def test_stepper_pages_show_prompts_with_visible_evidence_and_no_hidden_test_text() -> None:
    from labkit.experiments.arms.suites import humaneval_cases

    ledger, _ = page.real_ledgers()["humaneval"]
    names = steps.stepper_cases(ledger)
    cases = {c.id: c for c in humaneval_cases([n.replace("humaneval-", "HumanEval/") for n in names])}
    for name in names:
        task = cases[name].task
        visible = "\n".join(str(t) for t in task.suite.tests.values())
        hidden = "\n".join(str(t) for t in task.hidden.tests.values())
        labels, pages = steps.case_pages(ledger, name)
        text = html.unescape("\n".join(pages))
        assert len(labels) == len(pages) and any(lab.startswith("reflect on failing tests, round") for lab in labels)
        assert "the prompt as sent" in text  # real prompts are shown ...
        assert any(ln.strip() in text for ln in visible.splitlines() if "assert" in ln)  # ... with the visible tests
        leaked = [ln for ln in _hidden_lines(hidden, visible) if ln in text]
        assert not leaked, f"{name}: hidden test text on a step page: {leaked[:3]}"
        assert "test_hidden" not in text and "def check(" not in text


def test_calls_of_splits_prompts_from_replies() -> None:
    raw = "<prompt>\nask one\n</prompt>\nreply one\n---\n<prompt>\nask two\n</prompt>\nreply two"
    assert steps.calls_of(raw) == [("ask one", "reply one"), ("ask two", "reply two")]
    assert steps.calls_of("[simulated] fix") == [("", "[simulated] fix")]
    with pytest.raises(ValueError, match="no arms job on case 'nope'"):
        steps.case_pages(page.real_ledgers()["humaneval"][0], "nope")


def test_opening_the_page_imports_no_model_client() -> None:
    code = (
        "import sys\nfrom labkit.views import arms_page as page, arms_steps as steps\n"
        "from labkit.views import arms_real\nreal = page.real_ledgers()\narms_real.real_intro(real); arms_real.real_table(real)\n"
        "sim, label = page.simulated(page.BUDGET.value, page.sim_settings())\nassert label == page.RECORDED_LABEL\n"
        "page.budget_md(sim, 3, label); page.arms_chart(sim, page.SIM_TITLE); page.flip_frame(sim); page.spend_frame(sim)\n"
        "steps.case_stepper(real['humaneval'][0])\nassert 'litellm' not in sys.modules, 'litellm imported'\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]


def test_flip_caption_counts_breaks_from_the_table() -> None:
    breaking = Ledger()  # a critic that is always wrong sends right answers back; every blind revision breaks
    plan = Plan(sim={"p_break": 1.0, "critic_accuracy": 0.0})
    merge(breaking, sweep(plan, jobs_for("repair", ["is_palindrome"], ["self_refine"], [0]), workers=1))
    flips = page.flip_frame(breaking)
    assert flips["right → wrong"].sum() >= 1
    assert "right answer(s) broke, in Self-Refine" in page.flips_md(flips)
    calm = page.flip_frame(_ledger(["direct"], [0], p_fix_blind=1.0))
    assert page.flips_md(calm).startswith("1 wrong answer(s) were fixed; no right answer broke")

"""Is reflection worth it? The notebook's text, controls, tables and charts, built once for both twins.

`notebooks/reflection_worth_it.py` (marimo) and `notebooks/reflection_worth_it.ipynb`
(JupyterLab) call these functions and differ only in how they display the result. Every
number comes from a ledger through `labkit.experiments.arms.arm_metrics`: the SIMULATED sweep
(`simulated`: at the sliders' default setting the recorded run `data/arms/simulated_default.sqlite`,
so the page opens at once; any other setting computed by `simulated_sweep` and cached per setting,
so a slider only chooses which one to show) and the recorded real run (SmolLM2-135M, `data/arms/*.sqlite`, read
offline; no model is called).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import altair as alt
import polars as pl

from labkit.core.paths import data_root
from labkit.experiments.arms import arm_metrics as metrics
from labkit.experiments.arms.plans import budget_plan
from labkit.experiments.arms.run import Plan
from labkit.record.ledger import Ledger
from labkit.views.controls import Slider
from labkit.views.glossary import link_first_uses
from labkit.views.tables import estimate

__all__ = [
    "ARM_NAMES", "ARM_ORDER", "BUDGET", "COVERAGE", "COVERAGE_MD", "FLIPS_MD", "INTRO", "LIVE_LABEL", "REAL_MODEL", "RECORDED_LABEL", "SIM", "SIM_CASES", "SIM_RECORDING",
    "SIM_SEEDS", "SIM_TITLE", "STEPPER_MD", "arm_name", "arms_chart", "arms_frame", "budget_md", "flip_frame", "flips_md",
    "real_ledgers", "recorded_default", "sim_plan", "sim_settings", "simulated", "simulated_sweep", "spend_frame",
]  # fmt: skip

ARM_ORDER = ("direct", "best_of_n", "reflect", "self_refine", "eval_opt", "self_tests", "stronger")
# arm id -> (the name a class reads, what the arm does in one line)
ARM_NAMES = {
    "direct": ("one draft", "one answer, no second look"),
    "best_of_n": ("best of n", "n answers at once; the one passing the most visible tests is kept"),
    "reflect": ("reflect on failing tests", "revise with the failing visible tests' messages: external evidence"),
    "self_refine": ("Self-Refine", "the model critiques its own code and revises it; no tests"),
    "eval_opt": ("separate critic", "a second call judges the code and asks for a rewrite; no tests"),
    "self_tests": ("self-written tests", "the model writes tests; their failures drive its revisions"),
    "stronger": ("stronger model", "one draft by a stronger model"),
}
REAL_MODEL = "SmolLM2-135M"
# 6 buggy repair cases and 2 already correct (the correct-original slice), fixed here.
SIM_CASES = ("camel_to_snake", "chunks", "flatten", "is_palindrome", "median", "pluralize", "safe_div", "slugify")
SIM_SEEDS = (0, 1, 2, 3)
SIM_RECORDING = "simulated_default"  # data/arms/<this>.sqlite + .json: the default setting's sweep, recorded
RECORDED_LABEL = "SIMULATED (recorded run of the default setting)"
LIVE_LABEL = "SIMULATED (computed now for this setting)"

_ARMS_TABLE = "\n".join(f"| {name} | {what} |" for name, what in ARM_NAMES.values())
INTRO = f"""# Is reflection worth it? Same budget, hidden tests

Reflection can only help when it brings **new evidence**: here, the failing visible tests'
messages. So compare, under one budget (calls, tokens, wall time, reserved before every step),
one draft, n samples plus selection, reflection on test failures, three intrinsic arms that
only critique themselves (Self-Refine, a separate critic, self-written tests) and a stronger
model in one shot — and score every arm on **hidden** tests its prompts never saw.

| arm | what it does |
|:---|:---|
{_ARMS_TABLE}

First the arms side by side from a **SIMULATED** policy (its parameters are sliders; the engine,
the budget and the validator are real); then **REAL** runs recorded with SmolLM2-135M, which
solved nothing it had to solve."""

SIM_TITLE = "SIMULATED policy: solved on the hidden tests, per arm"
FLIPS_MD = """## Who flipped, round by round

Per arm and round, jobs that went **wrong → right** and **right → wrong** on the hidden tests (and
those that stayed), SIMULATED, from the sweep above."""
STEPPER_MD = """## One case, every arm, round by round (REAL run, SmolLM2-135M)

Each step is one round of one arm on the same problem: the prompt exactly as sent (visible tests and
their results only; the hidden tests never reach a prompt), the reply, each candidate's code and
visible results, its hidden result (pass or fail, nothing more) and the spend against the limit."""

BUDGET = Slider(1, 4, 3, 1, "budget: calls per job")
SIM = {
    "p_fix_evidence": Slider(0.0, 1.0, 0.6, 0.05, "P(fix | failing-test evidence)"),
    "p_fix_blind": Slider(0.0, 1.0, 0.3, 0.05, "P(fix | no evidence)"),
    "p_break": Slider(0.0, 0.5, 0.15, 0.05, "P(break | correct, revised blind)"),
    "critic_accuracy": Slider(0.0, 1.0, 0.7, 0.05, "P(a critique is right about the code)"),
    "rho": Slider(0.0, 0.9, 0.9, 0.1, "correlation between samples"),
}


def sim_settings(chosen: Mapping[str, float] | None = None) -> dict[str, float]:
    """The simulated policy's parameters: the sliders' defaults, overridden by `chosen`."""
    unknown = set(chosen or {}) - set(SIM)
    if unknown:
        raise ValueError(f"unknown simulated-policy parameter(s) {sorted(unknown)}; they are {sorted(SIM)}")
    return {k: float((chosen or {}).get(k, spec.value)) for k, spec in SIM.items()}


def sim_plan(calls: int, **sim: float) -> Plan:
    """The simulated sweep's plan at a budget of `calls` calls: 1024 tokens per call, 600 s wall, a
    simulated stronger policy (P(fix | no evidence) 0.6, labelled as such)."""
    return budget_plan(calls, wall=600.0, stronger="sim", sim=sim)


@functools.lru_cache(maxsize=24)
def simulated_sweep(
    calls: int = 3,
    p_fix_evidence: float = 0.6,
    p_fix_blind: float = 0.3,
    p_break: float = 0.15,
    critic_accuracy: float = 0.7,
    rho: float = 0.9,
) -> Ledger:
    """SIMULATED: every arm on SIM_CASES × SIM_SEEDS under a budget of `calls` calls; an in-memory ledger.

    Cached per setting: a slider that returns to a setting shows it at once.
    """
    from labkit.experiments.arms.run import jobs_for, merge, sweep

    plan = sim_plan(
        calls,
        p_fix_evidence=p_fix_evidence,
        p_fix_blind=p_fix_blind,
        p_break=p_break,
        critic_accuracy=critic_accuracy,
        rho=rho,
    )
    results = sweep(plan, jobs_for("repair", SIM_CASES, ARM_ORDER, SIM_SEEDS), workers=1)
    ledger = Ledger()
    merge(ledger, results)
    return ledger


def _meta(path: Path) -> dict[str, Any]:
    meta_path = path.with_suffix(".json")
    return dict(json.loads(meta_path.read_text(encoding="utf-8"))) if meta_path.is_file() else {}


def _rounded(plan: Plan) -> Plan:
    """A plan with its simulated parameters to 6 decimals (a slider's 0.6 may arrive as 0.6000000000000001)."""
    return replace(plan, sim={k: round(v, 6) for k, v in plan.sim.items()})


def _recorded_plan(meta: dict[str, Any]) -> Plan:
    """The plan a recording's .json says it ran (see `python -m labkit.experiments.arms`)."""
    limit = meta["limit"]
    return budget_plan(
        int(limit["calls"]),
        tokens_per_call=int(limit["tokens"]) // int(limit["calls"]),
        wall=float(limit["wall_seconds"]),
        stronger=meta["stronger"],
        sim=meta["sim"],
        n=int(meta["n"]),
    )


def recorded_default(folder: Path | None = None) -> tuple[Ledger, dict[str, Any], Plan] | None:
    """The recorded default-setting sweep (read only): its ledger, .json and plan; None when not recorded.

    A recording of other cases, arms or seeds than this page's is not this page's sweep: None.
    """
    return _recorded_at((folder or data_root() / "arms").absolute() / f"{SIM_RECORDING}.sqlite")


@functools.lru_cache(maxsize=4)
def _recorded_at(path: Path) -> tuple[Ledger, dict[str, Any], Plan] | None:
    if not path.is_file():
        return None
    meta = _meta(path)
    same_jobs = (
        meta.get("suite"),
        tuple(meta.get("cases", ())),
        tuple(meta.get("arms", ())),
        str(meta.get("seeds")),
    ) == ("repair", SIM_CASES, ARM_ORDER, ",".join(map(str, SIM_SEEDS)))
    if not same_jobs or meta.get("model") != "simulated" or meta.get("ran") != meta.get("jobs"):
        return None
    return Ledger(path, read_only=True), meta, _recorded_plan(meta)


def simulated(calls: int, settings: Mapping[str, float], folder: Path | None = None) -> tuple[Ledger, str]:
    """The SIMULATED sweep at this setting and its label: the recorded run when it is exactly the
    recorded setting (the sliders' defaults), else computed now (`simulated_sweep`, cached)."""
    recorded = recorded_default(folder)
    if recorded is not None and _rounded(sim_plan(calls, **settings)) == _rounded(recorded[2]):
        return recorded[0], RECORDED_LABEL
    return simulated_sweep(int(calls), **{k: float(v) for k, v in settings.items()}), LIVE_LABEL


def real_ledgers(folder: Path | None = None) -> dict[str, tuple[Ledger, dict[str, Any]]]:
    """The recorded real runs: suite -> (ledger, its .json summary), from data/arms (read only)."""
    out = {}
    for path in sorted((folder or data_root() / "arms").glob("*.sqlite")):
        meta = _meta(path)
        if meta.get("model") == "simulated":  # a recorded SIMULATED sweep is not a real run
            continue
        out[str(meta.get("suite", path.stem))] = (Ledger(path, read_only=True), meta)
    return out


def arm_name(arm: str) -> str:
    """The arm's plain name (`ARM_NAMES`); an arm labkit does not know keeps its id."""
    return ARM_NAMES.get(arm, (arm, ""))[0]


def _ordered(rows: list[metrics.ArmRow]) -> list[metrics.ArmRow]:
    rank = {a: k for k, a in enumerate(ARM_ORDER)}
    return sorted(rows, key=lambda r: rank.get(r.arm, len(rank)))


# seed 000's "test coverage" for the same-budget comparison, as a stated proxy (metrics.ArmRow.coverage)
COVERAGE = "test coverage (proxy)"  # defined in COVERAGE_MD, shown under the table
COVERAGE_MD = (
    "_**Test coverage (proxy)**: seed 000 lists test coverage beside success for a same-budget comparison; "
    "it is shown as a stated proxy, not line coverage: of the jobs whose final answer fails the hidden tests, the share the "
    "visible (acceptance) tests also fail. The rest are wrong answers the acceptance would accept; an arm "
    "that selects or revises on the visible tests leaves its remaining errors where they do not look._"
)


def arms_frame(ledger: Ledger) -> pl.DataFrame:
    """One row per arm from the ledger: what it solved (hidden), visible, the gap, right answers broken,
    and the acceptance's test coverage proxy (shares of jobs, with 95% bootstrap intervals where they
    are not a single point)."""
    rows = []
    for r in _ordered(metrics.ledger_table(ledger)):
        rows.append(
            {
                "arm": arm_name(r.arm),
                "jobs": r.jobs,
                "solved on hidden tests [95% CI]": r.status or estimate(r.success),
                "passes visible tests": estimate(r.visible),
                "visible − hidden": estimate(r.gap),
                "right after round 1, wrong at end": estimate(r.broken_first),
                COVERAGE: estimate(r.coverage),
            }
        )
    return pl.DataFrame(rows)


def _mean(x: float) -> str:
    """A mean of counts: a whole number as one, else one decimal."""
    return f"{x:.0f}" if float(x).is_integer() else f"{x:.1f}"


def spend_frame(ledger: Ledger) -> pl.DataFrame:
    """One row per arm: rounds worked, jobs out of budget (still counted), spend per job beside the
    limit (the limit once, in the header)."""
    table = _ordered(metrics.ledger_table(ledger))
    limit = next((r.spend for r in table if r.spend and "limit_calls" in r.spend), {})
    calls = f"calls: mean, max (limit {limit['limit_calls']:.0f})" if limit else "calls: mean, max"
    tokens = f"tokens: mean, max (limit {limit['limit_tokens']:.0f})" if limit else "tokens: mean, max"
    rows = []
    for r in table:
        s, na = r.spend or {}, r.status or None
        out = round((r.incomplete.estimate if r.incomplete else 0.0) * r.jobs)
        rows.append(
            {
                "arm": arm_name(r.arm),
                "rounds worked, mean": na or _mean(r.rounds.estimate if r.rounds else 0.0),
                "out of budget": na or f"{out} of {r.jobs}",
                calls: na or f"{_mean(s['calls_mean'])}, {s['calls_max']:.0f}",
                tokens: na or f"{s['tokens_mean']:.0f}, {s['tokens_max']:.0f}",
                "tokens per success": na or (f"{r.tokens_per_success.estimate:.0f}" if r.tokens_per_success else "—"),
            }
        )
    return pl.DataFrame(rows)


def arms_chart(ledger: Ledger, title: str) -> alt.LayerChart:
    """Hidden-test success per arm with its 95% bootstrap interval (arms not available are left out)."""
    rows = [
        {"arm": arm_name(r.arm), "solved": r.success.estimate, "low": r.success.low, "high": r.success.high}
        for r in _ordered(metrics.ledger_table(ledger))
        if r.success is not None
    ]
    frame = pl.DataFrame(rows)
    order = [str(r["arm"]) for r in rows]
    y = alt.Y("arm:N", sort=order, title=None)
    axis, scale = "solved on the hidden tests (95% bootstrap interval)", alt.Scale(domain=[0, 1])
    bar = alt.Chart(frame).mark_rule(strokeWidth=2, color="#4c78a8")
    rule = bar.encode(y=y, x=alt.X("low:Q", scale=scale, title=axis), x2="high:Q")
    tip = ["arm", "solved", "low", "high"]
    dot = (
        alt.Chart(frame)
        .mark_point(filled=True, size=80, color="#1f4e79")
        .encode(y=y, x=alt.X("solved:Q", scale=scale, title=axis), tooltip=tip)
    )
    return (rule + dot).properties(width=460, height=24 * max(1, len(rows)), title=title)


def flip_frame(ledger: Ledger) -> pl.DataFrame:
    """Per arm and round: how many jobs went wrong→right and right→wrong (and stayed), from the ledger."""
    frame = metrics.runs(ledger)
    out = []
    for arm in (a for a in ARM_ORDER if a in set(frame["arm"])):
        try:
            t = metrics.flips(frame, arm)
        except ValueError:  # not available: no scored job
            continue
        for rnd in t["round"].unique(maintain_order=True).to_list():
            cell = {
                (b, a): int(c)
                for b, a, c in t.filter(pl.col("round") == rnd).select("before", "after", "count").iter_rows()
            }
            out.append(
                {
                    "arm": arm_name(arm),
                    "round": rnd,
                    "wrong → right": cell.get(("wrong", "right"), 0),
                    "right → wrong": cell.get(("right", "wrong"), 0),
                    "stayed right": cell.get(("right", "right"), 0),
                    "stayed wrong": cell.get(("wrong", "wrong"), 0),
                }
            )
    return pl.DataFrame(out)


def flips_md(frame: pl.DataFrame) -> str:
    """The flip table's caption: how many answers broke, counted from the table itself."""
    broke = int(frame["right → wrong"].sum()) if frame.height else 0
    fixed = int(frame["wrong → right"].sum()) if frame.height else 0
    where = ", ".join(sorted(set(frame.filter(pl.col("right → wrong") > 0)["arm"]))) if broke else ""
    said = (
        f"{broke} right answer(s) broke, in {where}"
        if broke
        else "no right answer broke here: a break that fails a visible protective test is rolled back, and a right "
        "answer is only revised blind when a critique wrongly rejects it (lower the critic's accuracy and raise "
        "P(break) to see breaks)"
    )
    return link_first_uses([f"{fixed} wrong answer(s) were fixed; {said}."], ["p2p", "decisions"])[0]


def budget_md(ledger: Ledger, calls: int, label: str = "SIMULATED") -> str:
    """The simulated sweep at this budget, in words, every number read from its table; `label` says
    whether it is the recorded default run or computed now."""
    rows = {r.arm: r for r in metrics.ledger_table(ledger) if r.success is not None}
    best = max(rows.values(), key=lambda r: r.success.estimate if r.success else 0.0)
    direct, reflect = rows.get("direct"), rows.get("reflect")
    said = (
        f"reflect on failing tests solves **{estimate(reflect.success)}**, one draft **{estimate(direct.success)}**"
        if direct and reflect and direct.success and reflect.success
        else ""
    )
    n_jobs = sum(r.jobs for r in rows.values())
    recorded = recorded_default() if label == RECORDED_LABEL else None
    how = (
        f" Recorded in {recorded[1]['seconds']:.0f} s (the command is under *How these runs were recorded* below); "
        "any other setting is computed when chosen (tens of seconds the first time)."
        if recorded
        else ""
    )
    return (
        f"**{label}**, {calls} call{'s' if calls != 1 else ''} ({1024 * calls} tokens) per job: {said}; highest: **{arm_name(best.arm)}** "
        f"({estimate(best.success)}). {n_jobs} jobs: {len(SIM_CASES)} repair cases × {len(SIM_SEEDS)} seeds per arm, "
        f"each validated for real; intervals are 95% bootstraps over jobs.{how}"
    )

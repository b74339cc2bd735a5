"""The "Published runs, re-graded" section of reflection_worth_it (marimo .py and its .ipynb twin).

Everything here is a published run (the Reflexion authors' GPT-4 logs), re-graded by labkit: read
from the committed tables (data/published/reflexion/) and the recorded ladder, never merged with
the page's simulated numbers, never recomputed on open. A rung the ladder does not hold is shown
as "not available" (the rung cannot apply) or "not computed", never as zero.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

import altair as alt
import polars as pl

from labkit.core.errors import LabkitError
from labkit.core.stats import Interval
from labkit.experiments.published import gains
from labkit.experiments.published import ladder as recording
from labkit.experiments.published.calibration import Estimate, calibrate
from labkit.experiments.published.gains import LABEL, RUNGS, LadderRow
from labkit.experiments.published.reflexion_logs import candidate_source, load_problems, load_runs
from labkit.views.stepper import Stepper
from labkit.views.tables import frame_html

__all__ = [
    "CALIBRATION_MD", "INTRO", "LABEL", "PUBLISHED_MD", "REFLECTIONS_MD", "RUNG_NAMES", "WINS_MD", "beliefs_html", "calibration_frame", "evalplus_md", "ladder", "ladder_chart",
    "ladder_frame", "problem_choices", "problem_stepper", "published_frame", "reflections_frame", "self_tests_md",
    "wins_frame",
]  # fmt: skip

RUNG_NAMES = {"own_tests": "own tests", "visible": "docstring examples", "check": "benchmark check",
              "differential_raw": "differential (raw)", "differential_contract": "differential (contract)"}  # fmt: skip
NOT_COMPUTED = "not computed"
NOT_AVAILABLE = "not available"  # the rung cannot apply to that run (the recording says why)
INTRO = f"""## Published runs, re-graded

*Every figure in this section: {LABEL}.* Not simulated, and never mixed with the simulated
numbers above. The Reflexion authors logged GPT-4's runs on HumanEval and MBPP (Reflexion with
self-written tests, and a single-shot baseline); labkit re-grades every logged solution through
its isolated validator on an oracle ladder, from weakest to strongest: GPT-4's own tests, the
docstring examples, the benchmark's `check`, and differential testing against the canonical
solution (raw, then respecting each problem's input contract).

Read this before the tables: in the HumanEval Reflexion log the *first* attempt was graded on the
benchmark's hidden tests, and reflection began only after it failed them. So "no reflection"
means "the first sample passed", and a Reflexion-only win with no reflection is a lucky sample,
not self-correction."""


WINS_MD = f"""### Where the gain comes from

Problems only one run solved, counted per benchmark (95% bootstrap intervals over problems), as
the logs say and as labkit's `check` says. Only **"only Reflexion, after reflecting"** can be
self-correction; **"no reflection (luck)"** is the first sample being right where the single-shot
sample was not. *{LABEL}.*"""
REFLECTIONS_MD = """**Pass rate by number of reflections** (as logged). In the HumanEval log, zero reflections
means the first attempt passed the hidden tests (that is why it is 100 %); 9 is the most the run
allowed (10 attempts), so those problems' own tests never passed. MBPP allowed 4."""
CALIBRATION_MD = f"""### Where the simulations' defaults come from

What these logs support, with 95% bootstrap intervals, and which parameters no logged run can
identify. Where a log identifies a parameter with the simulation's meaning, the simulated policy's
default is taken from it, rounded onto the slider's grid inside the interval: the correlation
between samples (0.9, was typed in as 0.5), the share of wrong answers that pass the visible tests
(0.7, was 0.3) and the share of weak self-written tests (0.15, was 0.4); the arms sweep above is
recorded at those defaults. The others keep their typed-in values, each for the reason given.
*{LABEL}.*"""


def ladder() -> list[LadderRow] | None:
    """The recorded ladder, or None when ladder.jsonl has not been recorded (rungs then say "not computed")."""
    return gains.ladder_or_none()


def _pct(iv: Interval) -> str:
    if iv.high - iv.low < 1e-12:  # every resample alike (all pass, all fail): an interval says nothing
        return f"{100 * iv.estimate:.1f} %"
    return f"{100 * iv.estimate:.1f} % [{100 * iv.low:.1f}, {100 * iv.high:.1f}]"


def _count(iv: Interval) -> str:
    return f"{iv.estimate:.0f} [{iv.low:.0f}, {iv.high:.0f}]"


def _unavailable() -> Mapping[str, Mapping[str, Mapping[str, int]]]:
    """The recording's reasons a run has no verdicts on a rung ({} when nothing is recorded)."""
    try:
        return recording.load_recording()[1].get("unavailable", {})
    except LabkitError:  # no recording yet: every missing rung is "not computed"
        return {}


def _missing(unavailable: Mapping[str, Mapping[str, Mapping[str, int]]], run: str, rung: str) -> str:
    """Why `run` has no verdicts on `rung`: "not available" when the recording says the rung cannot
    apply (MBPP has no canonical solution and no examples), else "not computed"."""
    why = unavailable.get(run, {}).get(rung, {})
    return NOT_AVAILABLE if any(w.startswith(NOT_AVAILABLE) for w in why) else NOT_COMPUTED


def _rate(row: gains.RateRow | None, missing: str = NOT_COMPUTED) -> str:
    return missing if row is None else f"{row.passed} of {row.problems}: {_pct(row.rate)}"


def ladder_frame(rows: Sequence[LadderRow] | None) -> pl.DataFrame:
    """Per run: the paper's figure, the log's own count, and labkit's pass rate on each rung."""
    out, unavailable = [], _unavailable() if rows else {}
    for p in gains.published_beside(rows):
        rec = {
            "run": p.run,
            "paper (Table 1)": f"{p.paper:.1f} %",
            "logged is_solved": _rate(p.logged),
        }
        rec |= {RUNG_NAMES[r]: _rate(gains.rung_rate(rows, p.run, r), _missing(unavailable, p.run, r)) for r in RUNGS}
        out.append(rec)
    return pl.DataFrame(out)


def ladder_chart(rows: Sequence[LadderRow] | None) -> alt.FacetChart:
    """Pass rate per rung for each run (95% bootstrap interval); a rung without verdicts is a label saying
    why (not available, not computed), never a bar."""
    data, unavailable = [], _unavailable() if rows else {}
    for run in gains.PUBLISHED:
        for rung in RUNGS:
            got = gains.rung_rate(rows, run, rung)
            iv = got.rate if got else None
            data.append(
                {
                    "run": run,
                    "rung": RUNG_NAMES[rung],
                    "rate": iv.estimate if iv else None,
                    "low": iv.low if iv else None,
                    "high": iv.high if iv else None,
                    "shown": "computed" if iv else "missing",
                    "note": _missing(unavailable, run, rung),
                }
            )
    frame = pl.DataFrame(data, schema_overrides={"rate": pl.Float64, "low": pl.Float64, "high": pl.Float64})
    order = [RUNG_NAMES[r] for r in RUNGS]
    y = alt.Y("rung:N", sort=order, title=None)
    scale = alt.Scale(domain=[0, 1])
    x_title = "passes (95% bootstrap interval)"
    base = alt.Chart()
    computed = base.transform_filter(alt.datum.shown == "computed")
    bar = computed.mark_bar(color="#4c78a8", opacity=0.8).encode(
        y=y, x=alt.X("rate:Q", scale=scale, title=x_title), tooltip=["run", "rung", "rate", "low", "high"]
    )
    err = computed.mark_rule(color="#1f2f4f").encode(y=y, x="low:Q", x2="high:Q")
    missing = base.transform_filter(alt.datum.shown == "missing").mark_text(
        align="left", dx=4, color="#888", fontStyle="italic"
    )
    text = missing.encode(y=y, x=alt.value(0), text="note:N")
    layered = alt.layer(bar, err, text, data=frame).properties(width=230, height=130)
    title = alt.TitleParams(
        f"The oracle ladder: {LABEL}",
        subtitle="a rung without verdicts says why (not available, or not computed), never drawn as zero",
    )
    return layered.facet(facet=alt.Facet("run:N", title=None, sort=list(gains.PUBLISHED)), columns=2).properties(
        title=title
    )


def wins_frame(rows: Sequence[LadderRow] | None) -> pl.DataFrame:
    """Problems only one run solved, by benchmark and grader, split by whether Reflexion reflected."""
    out: list[Mapping[str, object]] = []
    for bench in gains.BENCHMARKS:
        for grader in ("logged", "check"):
            if grader == "check" and not gains.rung_rate(rows, gains.BENCHMARKS[bench][0], "check"):
                out.append(
                    {"benchmark": bench, "graded by": "labkit check", "problems": None}
                    | dict.fromkeys(_WIN_COLUMNS, NOT_COMPUTED)
                )
                continue
            w = gains.wins(gains.outcomes(bench, grader, rows))
            cells = w.cells()
            out.append(
                {
                    "benchmark": bench,
                    "graded by": "the log" if grader == "logged" else "labkit check",
                    "problems": w.problems,
                }
                | {c: _count(v) for c, v in zip(_WIN_COLUMNS, cells, strict=True)}
            )
    return pl.DataFrame(out, schema_overrides={"problems": pl.Int64})


_WIN_COLUMNS = ("both solved", "only Reflexion, after reflecting", "only Reflexion, no reflection (luck)",
                "only single-shot", "neither", "net (Reflexion − single-shot)")  # fmt: skip


def reflections_frame() -> pl.DataFrame:
    """Reflexion's pass rate (as logged) by the number of reflections it used."""
    out = []
    for bench in gains.BENCHMARKS:
        for r in gains.by_reflections(gains.outcomes(bench)):
            out.append(
                {
                    "run": r.run,
                    "reflections": int(r.group),
                    "problems": r.problems,
                    "solved": r.passed,
                    "pass rate": _pct(r.rate),
                }
            )
    return pl.DataFrame(out)


def self_tests_md() -> str:
    """The self-written tests' accuracy, from the authors' test-acc log."""
    r = gains.self_test_accuracy()
    return (
        f"**GPT-4's own tests** (the authors' test-acc log, HumanEval): the canonical solution passes all of "
        f"GPT-4's tests on {r.passed} of {r.problems} problems, **{_pct(r.rate)}**. On the other "
        f"{r.problems - r.passed}, a correct program would be told it is wrong: this is the evidence "
        "Reflexion's reflections argued from."
    )


PUBLISHED_MD = f"""**The published tables beside labkit's** (Table 1 of Shinn et al. 2023, pass@1). The paper's
HumanEval "GPT-4" 80.1 is not the single-shot log's own count. *{LABEL}.*"""


def published_frame(rows: Sequence[LadderRow] | None) -> pl.DataFrame:
    """Table 1 of the paper beside the logs' own counts and labkit's re-grading."""
    return pl.DataFrame(
        [
            {
                "run": p.run,
                "paper (Table 1)": f"{p.paper:.1f} %",
                "log's own is_solved": _rate(p.logged),
                "labkit check": _rate(p.check),
                "labkit differential (contract)": _rate(p.differential),
            }
            for p in gains.published_beside(rows)
        ]
    )


def evalplus_md(rows: Sequence[LadderRow] | None) -> str:
    """EvalPlus's published drop beside labkit's check → differential drop on the single-shot run."""
    before, after = gains.EVALPLUS
    head = (
        f"**EvalPlus** (Liu et al. 2023, its own GPT-4 sample): HumanEval {before:.1f} % → HumanEval+ {after:.1f} % "
        f"({after - before:+.1f} points)."
    )
    check = gains.rung_rate(rows, "simple-humaneval", "check")
    diff = gains.rung_rate(rows, "simple-humaneval", "differential_contract")
    if check is None or diff is None:
        return head + f" labkit's check → differential on the single-shot log: {NOT_COMPUTED}."
    return head + (
        f" labkit on the authors' single-shot log: check {_pct(check.rate)} → differential (contract) "
        f"{_pct(diff.rate)}."
    )


def beliefs_html() -> str:
    """The entrenched false beliefs (selected by reading, from the authors' logs), quote beside prompt."""
    frame = pl.DataFrame(
        [
            {
                "problem": b.task_id,
                "reflection": f"{b.reflection + 1} of {b.reflections}",
                "the reflection says": b.reflection_quote,
                "the prompt says": b.prompt_quote,
                "why it is false": b.why,
                "repeated in": f"{b.repeated} of {b.reflections} reflections",
            }
            for b in gains.false_beliefs()
        ]
    )
    return (
        "<p><b>Entrenched false beliefs</b>: reflections that argue for a requirement the prompt does not state, "
        "in the model's own words beside the prompt (selected by reading, from the authors' logs).</p>"
        + frame_html(frame)
    )


def _estimate(e: Estimate) -> str:
    if e.estimate is None:
        return "not identifiable" if e.source == "—" else NOT_COMPUTED
    return str(e.estimate) if e.parameter.endswith(".rho") else _pct(e.estimate)  # rho is a correlation, not a share


def calibration_frame(rows: Sequence[LadderRow] | None) -> pl.DataFrame:
    """Each simulated parameter: its default, the logs' estimate (or why there is none), and where it comes from."""
    sim = {"SimulatedPolicy": "arms policy", "SimActor": "memory actor"}
    return pl.DataFrame(
        [
            {
                "simulation": sim[e.parameter.split(".")[0]],
                "parameter": e.parameter.split(".")[1],
                "default": f"{e.default:g}",
                "from the logs [95% interval]": _estimate(e),
                "counts": e.counts,
                "source": e.source,
                "what it is": e.note,
            }
            for e in calibrate(rows)
        ]
    )


def problem_choices(rows: Sequence[LadderRow] | None) -> list[str]:
    """HumanEval problems worth stepping through: Reflexion reflected on them (its wins first)."""
    o = gains.outcomes("humaneval")
    tasks = [t for t, k in zip(o.task_ids, o.reflections, strict=True) if k > 0]
    won = {t for t, r, s in zip(o.task_ids, o.reflexion, o.single, strict=True) if r and not s}
    return sorted(tasks, key=lambda t: (t not in won, int(t.split("/")[1])))


_PRE = "background:#f6f6f6;border:1px solid #ddd;padding:0.4em;white-space:pre-wrap;word-break:break-word;max-height:22em;overflow:auto;margin:0.2em 0"


def _verdict_page(task: str, rows: Sequence[LadderRow] | None) -> str:
    by = gains.by_task(rows or ())
    table, example = [], ""
    for run in gains.BENCHMARKS["humaneval"]:
        got = by.get((run, task), {})
        table.append(
            {"run": run}
            | {RUNG_NAMES[r]: ("pass" if got[r].passed else "fail") if r in got else NOT_COMPUTED for r in RUNGS}
        )
        failed = [got[r] for r in reversed(RUNGS) if r in got and not got[r].passed and got[r].reason]
        if failed and not example:
            why = (
                f"<p><b>why it fails</b> ({run}, {RUNG_NAMES[failed[0].rung]}): labkit's first failing test and "
                "its message (the counterexample, when the failure is a wrong answer)</p>"
            )
            example = why + f"<pre style='{_PRE}'>{html.escape(failed[0].reason)}</pre>"
    colours = {RUNG_NAMES[r]: {"pass": "#2e7d32", "fail": "#c62828", NOT_COMPUTED: "#888"} for r in RUNGS}
    return (
        f"<h4 style='margin:0'>{html.escape(task)} · labkit's verdict on each rung</h4>"
        + frame_html(pl.DataFrame(table), colours=colours)
        + (example or "<p>no rung labkit computed fails here</p>")
    )


def problem_stepper(task: str, rows: Sequence[LadderRow] | None) -> Stepper:
    """Step through one HumanEval problem: prompt, reflections in order, final solution, verdicts, counterexample."""
    problems = load_problems()
    found = problems.filter(pl.col("task_id") == task)
    if found.height != 1:
        raise ValueError(f"no HumanEval problem {task!r} in problems.jsonl")
    problem = found.row(0, named=True)
    runs = load_runs().filter(pl.col("task_id") == task)
    refl = runs.filter(pl.col("run") == "reflexion-humaneval").row(0, named=True)
    single = runs.filter(pl.col("run") == "simple-humaneval").row(0, named=True)
    e = html.escape
    head = f"<p style='color:#666;margin:0 0 4px'>{e(LABEL)}</p>"
    pages = [
        head + f"<h4 style='margin:0'>{e(task)} · the prompt</h4><pre style='{_PRE}'>{e(problem['prompt'])}</pre>"
        f"<p>single-shot answer, as logged: {'solved' if single['is_solved'] else 'not solved'}</p>"
    ]
    labels = ["prompt"]
    for k, text in enumerate(refl["reflections"], 1):
        labels.append(f"reflection {k}")
        pages.append(
            head + f"<h4 style='margin:0'>{e(task)} · reflection {k} of {len(refl['reflections'])}</h4>"
            f"<pre style='{_PRE}'>{e(text)}</pre>"
        )
    final = candidate_source(problem, refl)
    note = (
        ""
        if refl["solution"]
        else '<p>the log keeps no unsolved answer (the authors\' code wrote ""): this is the prompt alone</p>'
    )
    labels.append("final solution")
    pages.append(
        head + f"<h4 style='margin:0'>{e(task)} · Reflexion's final solution (logged "
        f"{'solved' if refl['is_solved'] else 'not solved'})</h4>{note}<pre style='{_PRE}'>{e(final)}</pre>"
    )
    labels.append("verdicts")
    pages.append(head + _verdict_page(task, rows))
    return Stepper(len(pages), labels, unit="step", pages=pages)

"""The diminishing-returns worked example's text, controls and steppers, built once for both notebooks.

`notebooks/diminishing_returns.py` (marimo) and `notebooks/diminishing_returns.ipynb`
(JupyterLab) call these functions and differ only in how they display the result. Numbers
come from `labkit.loop.engine.accounting` and `labkit.experiments.repair`; nothing here computes a loop.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from labkit.experiments import repair, repair_yours
from labkit.experiments import repair_recording as recording
from labkit.grading.verdicts import build_checker
from labkit.loop.engine import stopping
from labkit.loop.engine.stopping import RoundStats
from labkit.views import rounds_page as views
from labkit.views.controls import Slider
from labkit.views.glossary import link_first_uses
from labkit.views.report import step_view
from labkit.views.step_card import step_html
from labkit.views.stepper import Stepper
from labkit.views.tables import frame_html

__all__ = [
    "CONSTRUCTED", "INTRO", "RATES_TITLE", "RECORDED_AT", "REPAIR", "SLICES_TITLE", "STABILITY", "STOP_PROJECT_LABEL",
    "STOP_THRESHOLD", "YOURS", "YOURS_WAIT", "cases_md",
    "chapter_stepper", "oscillation_md", "paradox_md", "real_md", "real_run", "real_stepper", "real_title", "stability_rows",
    "stop_md", "verdict_checker", "yours_case_md", "yours_choices", "yours_html",
]  # fmt: skip

INTRO = """# Diminishing returns: when another round of repair hurts

Every repair round does two things at once: it removes known failures and it introduces
unknown breakage. This notebook counts both, per round, with intervals — first on the
chapter's worked example, then on 33 real code-repair cases run through a real validator."""

# The chapter's example is constructed per-case data (data/diminishing_returns/README.md): the
# chapter gives only the round totals; which cases move, and their slices, are labkit's choice.
# Said on the views themselves, not only in an earlier cell.
CONSTRUCTED = (
    "_**Constructed data**, not a run: per-case rows built (data/diminishing_returns/make.py) to reproduce "
    "the chapter's round totals; which cases move, and their slices, are labkit's illustrative choice._"
)
RATES_TITLE = "Fix rate falls, break rate rises (constructed cases, not a run)"
SLICES_TITLE = "Net per round, by slice (constructed cases, not a run)"

STOP_THRESHOLD = Slider(-10, 20, 0, 1, "stop when a round's net is ≤")
STOP_PROJECT_LABEL = "also stop before a round whose projected net is ≤ that"

RECORDED_AT = f"data/{recording.RECORD.parent.name}/{recording.RECORD.name}"  # as a reader finds it in the repo

# the defaults are the recorded run's setting (labkit.experiments.repair_recording): the page opens on that recording
REPAIR = {
    "p_fix": Slider(0.0, 1.0, recording.DEFAULT.p_fix, 0.05, "P(propose the fix), round 1"),
    "fix_decay": Slider(0.1, 1.0, recording.DEFAULT.fix_decay, 0.05, "then P(fix) × per round"),
    "p_break": Slider(0.0, 0.5, recording.DEFAULT.p_break, 0.01, "P(over-edit a passing case), round 1"),
    "break_growth": Slider(1.0, 3.0, recording.DEFAULT.break_growth, 0.1, "then P(over-edit) × per round"),
    "n_rounds": Slider(1, 6, recording.DEFAULT.rounds, 1, "rounds"),
    "seed": Slider(0, 999, recording.DEFAULT.seed, 1, "seed"),
}

STABILITY = (
    "Re-runs stop at the first disagreement (the known-flaky case gets up to 12). On open: the known-flaky "
    f"case's re-check as recorded (fresh pytest runs, in the .json beside {RECORDED_AT}); the button "
    "re-runs every original now, bypassing the cache."
)


def paradox_md(table: pl.DataFrame) -> str:
    """The chapter's paradox in words, every number read from the per-round table."""
    r = table.filter(pl.col("round") > 0)
    cum, ok = r["cumulative_fixed"].to_list(), table["correct"].to_list()
    return link_first_uses(
        [
            f"""## The paradox: cumulative success up, marginal net negative

{r["wrong_before"][0]} first-round failures (and {table["correct"][0]} cases that were right from
the start). Rounds 1–3 fix **{", ".join(map(str, r["fixed"]))}** and break
**{", ".join(map(str, r["broken"]))}**: net **{", ".join(f"{n:+d}" for n in r["net"])}**.

Count the fixes and the loop looks healthy — {" → ".join(map(str, cum))} cases fixed so far,
still rising at round 3. Count the cases that are right *now*: {" → ".join(map(str, ok))}.
Round 3 made things worse, and the cumulative curve hides it. (Computed by
`labkit.loop.engine.accounting` from per-case data built to match the chapter's table; intervals are
95% bootstraps over cases.)"""
        ],
        ["net"],
    )[0]  # the page's first use of "net" links to the glossary


def _arrows(text: str) -> str:
    return text.replace("<=", "≤").replace("->", "→")


def stop_md(threshold: float, project: bool, stats: Sequence[RoundStats]) -> str:
    """What `MarginalNet(threshold, project)` says on the chapter's rounds, and whether it stopped
    before the last round ran; every number read from the rule and the rounds."""
    fired = stopping.first_stop([stopping.MarginalNet(threshold=threshold, project=project)], stats)
    last = stats[-1].round
    if fired is None:
        when = f"never fires on these {len(stats)} rounds"
    elif fired[0] == last and "projected round" in fired[1].reason:
        when = (
            f"fires **after round {last}**, the last round here, on a projection of a round {last + 1} this "
            f"example does not have — {_arrows(fired[1].reason)}. Round {last} had already run"
        )
    else:
        when = f"fires **after round {fired[0]}** — {_arrows(fired[1].reason)}"
    if len(stats) < 3:  # a projection before the last round needs two rounds before it
        return f"`MarginalNet(threshold={threshold:g}, project={project})` {when}."
    fix, brk = stopping.project(list(stats[:-1]))  # what the rates said before the last round ran
    if fired is not None and fired[0] < last and "projected round" not in fired[1].reason:
        said = (
            f"It stopped **before round {last}** ran, on round {fired[0]}'s observed net; the projection from the fix "
            f"and break *rates* would have put round {last}'s net at **{fix - brk:+.1f}**."
        )
    elif fired is not None and fired[0] < last:
        said = (
            f"It stopped **before round {last}** ran: projecting the last two rounds' fix and break *rates* (fix "
            f"rate falling, break rate rising) put round {last}'s net at **{fix - brk:+.1f}** — the chapter's "
            f"point: the third round should not run by default."
        )
    else:
        said = (
            f"Round {last} ran before anything stopped it. Observed nets alone only show the damage after round "
            f"{last} has run; before it, the projection from the fix and break *rates* put its net at "
            f"**{fix - brk:+.1f}**, so a threshold at or above that, with projection on, stops before round {last} "
            f"— the chapter's point: the third round should not run by default."
        )
    return f"""`MarginalNet(threshold={threshold:g}, project={project})` {when}.

{said}"""


def chapter_stepper(chapter: pl.DataFrame, stats: Sequence[RoundStats]) -> Stepper:
    """Round by round on the chapter's example: each page (chart as SVG) built once, stepped in the browser."""
    return Stepper(len(stats), [f"round {s.round}" for s in stats], pages=views.chapter_pages(chapter))


def cases_md(cases: Sequence[repair.RepairCase]) -> str:
    return link_first_uses(
        [
            f"""## Beyond the table: {len(cases)} real repair cases

Each case in `data/repair_cases/` is a small module — buggy, or ({sum(c.initially_correct for c in cases)}
of them) already correct — with visible tests, hidden tests and real patches: the fix,
plausible wrong patches, and tempting "improvements". The repairer below is **simulated**: it
picks among those real patches with the fix and break probabilities you set. Every case runs
through labkit's one engine. The validator
(a real pytest run per candidate) and the tests are real. The loop keeps a change only if the
visible failures do not grow and no protective test breaks; the hidden tests score the result."""
        ],
        ["p2p"],
    )[0]


def verdict_checker(build: Path | None = None) -> repair.Checker:
    """A checker whose verdicts are cached in build/ (keyed by candidate, suite, validator, Python
    and pytest): the first run validates for real (a few minutes), later runs reuse it."""
    return build_checker("repair", build)


ShownRun = repair.RepairRun | recording.RecordedRepairRun


def real_run(
    cases: Sequence[repair.RepairCase],
    checker: repair.Checker,
    p_fix: float,
    fix_decay: float,
    p_break: float,
    break_growth: float,
    n_rounds: int,
    seed: int,
) -> ShownRun:
    """The repair run at the sliders' setting: at the defaults, the recorded run (read, not run:
    RECORDED_AT); at any other setting, or once a case changed, run now through the engine (every
    verdict a real pytest run, cached by `checker`)."""
    setting = recording.Setting(
        p_fix=p_fix,
        fix_decay=fix_decay,
        p_break=p_break,
        break_growth=break_growth,
        rounds=int(n_rounds),
        seed=int(seed),
    )
    shown = recording.recorded(setting, cases)
    if shown is not None:
        return shown
    return repair.run(cases, setting.repairer(), rounds=setting.rounds, checker=checker, rules=())


def real_md(result: ShownRun, threshold: float, project: bool) -> str:
    """The real run's caption (and, for the recorded one, how it was recorded) and what the stop
    rule would have done on it."""
    fired = stopping.first_stop([stopping.MarginalNet(threshold, project)], result.round_stats())
    when = f"would have stopped after round {fired[0]}: {fired[1].reason}" if fired else "would not have stopped"
    text = f"### {repair.label(result)}\n\nOn the hidden-test accounting, the stop rule {_arrows(when)}."
    if isinstance(result, recording.RecordedRepairRun):
        m, run = result.meta, result.meta["runs"][result.run_id]
        text = (
            f"### {repair.label(result)}: {recording.RECORDED_NOTE}\n\n_Read from `{RECORDED_AT}`, recorded by "
            f"`{m['command']}` ({run['pytest_runs']} real pytest runs, {run['seconds']:.0f} s; Python {m['python']}, "
            f"pytest {m['versions']['pytest']}). Any other setting runs now, every verdict a real pytest run, "
            f"cached in build/._\n\nOn the hidden-test accounting, the stop rule {_arrows(when)}."
        )
    return link_first_uses([text], ["stop_reasons"])[0]


def real_title(result: ShownRun) -> str:
    """The real run's chart title: its source, said on the chart."""
    how = recording.RECORDED_NOTE if isinstance(result, recording.RecordedRepairRun) else "run now"
    return f"{len(result.cases)} real repair cases, {repair.label(result)} — {how}"


def real_stepper(result: ShownRun) -> Stepper | None:
    """Round by round on the real cases (who moved, by patch), or None when no round ran."""
    if result.rounds_run == 0:
        return None
    pages = views.round_pages(result.correctness(), lambda r: frame_html(result.moves(r)))
    return Stepper(result.rounds_run, [f"round {r}" for r in range(1, result.rounds_run + 1)], pages=pages)


def oscillation_md(cases: Sequence[repair.RepairCase], checker: repair.Checker) -> str:
    """The oscillating case with a repairer that never finds the fix, and which rule stopped it:
    the recorded run (RECORDED_AT) while the case is as recorded, else run now."""
    case = next(c for c in cases if c.oscillates)
    shown = recording.recorded(recording.OSCILLATION, [case], recording.OSCILLATION_RUN_ID)
    if shown is not None:
        stop, how = shown.case_stop(case.id), f" (a recorded run, `{RECORDED_AT}`)"
    else:
        osc = recording.OSCILLATION
        run = repair.run([case], osc.repairer(), rounds=osc.rounds, checker=checker, rules=())
        stop, how = next(((s.rule, s.reason) for s in run.stops if s.case == case.id), None), " (run now)"
    return f"""## Two patches that oscillate

`{case.id}` has two tempting partial patches, `{case.oscillates[0]}` and `{case.oscillates[1]}`:
each fixes one failing test and fails the other. A repairer that never finds the real fix
(simulated, P(fix) = 0) alternates between them; the oscillation rule sees a candidate state
come back with a test flipped and stops{how}: **{stop[0] if stop else "no stop"}** —
{stop[1] if stop else ""}"""


def stability_rows(checker: repair.Checker, cases: Sequence[repair.RepairCase], every: bool) -> list[dict[str, object]]:
    """Every original re-run now, uncached (`every`); else the known-flaky originals' re-check as
    recorded (the .json beside RECORDED_AT), or re-run now when they changed since."""
    if not every and (rows := recording.recorded_stability(cases)) is not None:
        return rows
    return repair.stability(checker, cases if every else [c for c in cases if c.flaky])


# -- try your own patch on one case ----------------------------------------------------------

YOURS = """## Try your own patch on a repair case

Pick a case, read its buggy module and its visible tests, then write a hypothesis and edit the
diff (it starts as a comment on the line the bug is on: run as is, it fixes nothing). Your patch
is one round of **the same repair run** as above: the same validator (the visible tests, a real
pytest run), the same patch cap (none: a model repairer rewrites whole modules) and the same
decision — keep unless the visible failures grow or a protective test breaks. So a patch that
fixes nothing is kept too; that is how unseen breakage gets in. The hidden tests score what the
loop holds **after** it decided, exactly as in every round above. Editing the tests is refused."""

YOURS_WAIT = "_Pick a case, write a hypothesis, edit the diff, then press **Test my patch**._"


def yours_choices(cases: Sequence[repair.RepairCase]) -> dict[str, str]:
    """Dropdown label -> case id, buggy cases first (a correct case has nothing to fix)."""
    ordered = sorted(cases, key=lambda c: (c.initially_correct, c.id))
    return {f"{c.id}: {c.title}{' (already correct)' if c.initially_correct else ''}": c.id for c in ordered}


def yours_case_md(case: repair.RepairCase) -> str:
    """The case as a repairer sees it: the buggy module, the visible tests, which of them fail."""
    failing = ", ".join(f"`{n.split('::')[-1]}`" for n in repair_yours.failing_tests(case)) or "none"
    tests = "\n\n".join(
        f"`{path}`\n\n```python\n{text}\n```" for path, text in case.visible.tests.items() if isinstance(text, str)
    )
    return f"""**{case.id}** ({case.slice}): {case.title}. Visible tests failing now: {failing}.

`{case.module}`

```python
{case.original.files[case.module]}
```

{tests}"""


def yours_html(result: repair.RepairRun, case: repair.RepairCase) -> str:
    """Your round's step card (like any other round's), then the hidden tests' score after the decision."""
    trace = result.traces[case.id]
    card = step_html(step_view(trace, 1, case.visible))
    h = repair_yours.hidden(result, case.id)
    colour = "#2e7d32" if h.correct_after else "#c62828"
    return (
        card
        + '<div class="labkit-hidden" style="margin:0.6em 0;padding:0.4em 0.6em;border-left:4px solid '
        + f'{colour}"><b>Hidden tests</b> (scored after the decision, never shown to the repairer): '
        + f"{html.escape(h.line())}</div>"
    )

import marimo

__generated_with = "0.25.2"
app = marimo.App(
    width="medium",
    app_title="Diminishing returns: when another round of repair hurts",
)


@app.cell(hide_code=True)
def _():
    import marimo as mo

    return (mo,)


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    # Diminishing returns: when another round of repair hurts

    Every repair round does two things at once: it removes known failures and it introduces
    unknown breakage. This notebook counts both, per round, with intervals — first on the
    chapter's worked example, then on 33 real code-repair cases run through a real validator.
    """)
    return


@app.cell(hide_code=True)
def _():
    import polars as pl

    from labkit.loop import accounting

    from labkit.experiments import repair

    from labkit.loop import stopping
    from labkit.views import charts_rounds as charts
    from labkit.views import rounds as views
    from labkit.views.stepper import Stepper
    from labkit.views.tables import frame_html, rounded

    return (
        Stepper,
        accounting,
        charts,
        frame_html,
        pl,
        repair,
        rounded,
        stopping,
        views,
    )


@app.cell
def _(accounting):
    chapter = accounting.read_rounds(accounting.CHAPTER_EXAMPLE)
    table = accounting.per_round(chapter, resamples=1000)
    stats = accounting.round_stats(chapter)
    return chapter, stats, table


@app.cell
def _(mo, pl, table):
    _r = table.filter(pl.col("round") > 0)
    _cum, _ok = _r["cumulative_fixed"].to_list(), table["correct"].to_list()
    mo.md(f"""
    ## The paradox: cumulative success up, marginal net negative

    {_r["wrong_before"][0]} first-round failures (and {table["correct"][0]} cases that were right from
    the start). Rounds 1–3 fix **{", ".join(map(str, _r["fixed"]))}** and break
    **{", ".join(map(str, _r["broken"]))}**: net **{", ".join(f"{n:+d}" for n in _r["net"])}**.

    Count the fixes and the loop looks healthy — {" → ".join(map(str, _cum))} cases fixed so far,
    still rising at round 3. Count the cases that are right *now*: {" → ".join(map(str, _ok))}.
    Round 3 made things worse, and the cumulative curve hides it. (Computed by
    `labkit.loop.accounting` from per-case data built to match the chapter's table; intervals are
    95% bootstraps over cases.)
    """)
    return


@app.cell
def _(charts, table):
    charts.paradox_chart(table)
    return


@app.cell
def _(mo):
    threshold = mo.ui.slider(-10, 20, value=0, step=1, label="stop when a round's net is ≤", show_value=True)
    project = mo.ui.switch(value=True, label="also stop before a round whose projected net is ≤ that")
    mo.vstack([mo.md("## When to stop"), threshold, project])
    return project, threshold


@app.cell
def _(mo, project, stats, stopping, threshold):
    _rule = stopping.MarginalNet(threshold=threshold.value, project=project.value)
    _fired = stopping.first_stop([_rule], stats)
    _when = (
        f"fires **after round {_fired[0]}** — {_fired[1].reason}"
        if _fired
        else "never fires on these three rounds"
    )
    mo.md(f"""
    `MarginalNet(threshold={threshold.value}, project={project.value})` {_when}.

    Observed nets alone only show the damage after round 3 has run. Projecting the last two
    rounds' fix and break *rates* (fix rate falling, break rate rising) says before round 3
    that it will lose — which is the chapter's point: the third round should not run by default.
    """)
    return


@app.cell
def _(charts, table):
    charts.rates_chart(table)
    return


@app.cell
def _(Stepper, chapter, mo, stats, views):
    # Each round's page is built once by labkit (chart as SVG); the stepper shows it in the browser.
    chapter_step = mo.ui.anywidget(
        Stepper(len(stats), [f"round {s.round}" for s in stats], pages=views.chapter_pages(chapter))
    )
    mo.vstack([mo.md("### Round by round: who moved"), chapter_step])
    return


@app.cell
def _(accounting, chapter, charts, mo, rounded, views):
    _slices = accounting.per_slice(chapter, resamples=1000)
    mo.vstack(
        [
            mo.md("### Per slice: the average hides where the damage is"),
            charts.slices_chart(_slices),
            rounded(views.slice_table(_slices)),
        ]
    )
    return


@app.cell
def _(mo, repair):
    cases = repair.load_cases()
    mo.md(f"""
    ## Beyond the table: {len(cases)} real repair cases

    Each case in `data/repair_cases/` is a small module — buggy, or ({sum(c.initially_correct for c in cases)}
    of them) already correct — with visible tests, hidden tests and real patches: the fix,
    plausible wrong patches, and tempting "improvements". The repairer below is **simulated**: it
    picks among those real patches with the fix and break probabilities you set. Every case runs
    through labkit's one engine. The validator
    (a real pytest run per candidate) and the tests are real. The loop keeps a change only if the
    visible failures do not grow and no protective test breaks; the hidden tests score the result.
    """)
    return (cases,)


@app.cell
def _(mo):
    p_fix = mo.ui.slider(0.0, 1.0, value=0.6, step=0.05, label="P(propose the fix), round 1", show_value=True)
    fix_decay = mo.ui.slider(0.1, 1.0, value=0.7, step=0.05, label="then P(fix) × per round", show_value=True)
    p_break = mo.ui.slider(0.0, 0.5, value=0.03, step=0.01, label="P(over-edit a passing case), round 1", show_value=True)
    break_growth = mo.ui.slider(1.0, 3.0, value=2.0, step=0.1, label="then P(over-edit) × per round", show_value=True)
    n_rounds = mo.ui.slider(1, 6, value=4, label="rounds", show_value=True)
    seed = mo.ui.number(start=0, stop=999, value=0, label="seed")
    def _row(*xs):  # each "× per round" right beside the probability it scales
        return mo.hstack(list(xs), justify="start", gap=2)

    mo.vstack([_row(p_fix, fix_decay), _row(p_break, break_growth), _row(n_rounds, seed)])
    return break_growth, fix_decay, n_rounds, p_break, p_fix, seed


@app.cell
def _(mo, repair):
    # Every verdict is cached in build/ (keyed by candidate, suite, validator, Python and pytest):
    # the first run validates for real (a few minutes), later runs and slider moves reuse it.
    checker = repair.Checker(cache=repair.VerdictCache(mo.notebook_dir().parent / "build" / "repair_verdicts.json"))
    return (checker,)


@app.cell
def _(
    break_growth,
    cases,
    checker,
    fix_decay,
    mo,
    n_rounds,
    p_break,
    p_fix,
    repair,
    seed,
):
    repairer = repair.SimulatedRepairer(p_fix.value, fix_decay.value, p_break.value, break_growth.value, int(seed.value))
    with mo.status.spinner(title=f"running {len(cases)} cases through the engine (real pytest runs, cached)"):
        result = repair.run(cases, repairer, rounds=n_rounds.value, checker=checker, rules=())
    checker.cache.save()
    return (result,)


@app.cell
def _(
    charts,
    mo,
    project,
    repair,
    result,
    rounded,
    stopping,
    threshold,
    views,
):
    real_table = result.per_round(resamples=1000)
    _fired = stopping.first_stop([stopping.MarginalNet(threshold.value, project.value)], result.round_stats())
    _when = f"would have stopped after round {_fired[0]}: {_fired[1].reason}" if _fired else "would not have stopped"
    mo.vstack(
        [
            mo.md(f"### {repair.label(result)}\n\nOn the hidden-test accounting, the stop rule {_when}."),
            charts.paradox_chart(real_table),
            rounded(views.round_table(real_table)),
        ]
    )
    return (real_table,)


@app.cell
def _(Stepper, frame_html, mo, result, views):
    mo.stop(result.rounds_run == 0)
    _pages = views.round_pages(result.correctness(), lambda r: frame_html(result.moves(r)))
    real_step = mo.ui.anywidget(
        Stepper(result.rounds_run, [f"round {r}" for r in range(1, result.rounds_run + 1)], pages=_pages)
    )
    mo.vstack([mo.md("### Round by round on the real cases"), real_step])
    return


@app.cell
def _(mo, result, rounded, views):
    mo.vstack([mo.md("### Per slice on the real cases"), rounded(views.slice_table(result.per_slice(resamples=1000)))])
    return


@app.cell
def _(cases, checker, mo, repair):
    _case = next(c for c in cases if c.oscillates)
    _run = repair.run([_case], repair.SimulatedRepairer(fix=0.0), rounds=3, checker=checker, rules=())
    _stop = _run.stops[0] if _run.stops else None
    mo.md(f"""
    ## Two patches that oscillate

    `{_case.id}` has two tempting partial patches, `{_case.oscillates[0]}` and `{_case.oscillates[1]}`:
    each fixes one failing test and fails the other. A repairer that never finds the real fix
    (simulated, P(fix) = 0) alternates between them; the oscillation rule sees a candidate state
    come back with a test flipped and stops: **{_stop.rule if _stop else "no stop"}** —
    {_stop.reason if _stop else ""}
    """)
    return


@app.cell
def _(mo):
    stability = mo.ui.run_button(label="re-run every original a few times, bypassing the cache")
    mo.vstack([mo.md("## Fix acceptance first: is the validator stable?"), stability])
    return (stability,)


@app.cell
def _(cases, checker, mo, repair, stability):
    _pick = cases if stability.value else [c for c in cases if c.flaky]
    _rows = repair.stability(checker, _pick)
    mo.vstack(
        [
            mo.md(
                "Re-runs stop at the first disagreement (the known-flaky case gets up to 12). "
                "The button re-runs every original."
            ),
            mo.ui.table(_rows, selection=None),
        ]
    )
    return


@app.cell(hide_code=True)
def _(mo):
    from labkit.views.glossary import glossary_html

    mo.Html(glossary_html(["net", "stop_reasons", "f2p", "p2p"]))
    return


if __name__ == "__main__":
    app.run()

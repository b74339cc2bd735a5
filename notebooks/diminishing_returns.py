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
    from labkit.views import diminishing as page

    mo.md(page.INTRO)
    return (page,)


@app.cell(hide_code=True)
def _():
    from labkit.loop.engine import accounting

    from labkit.experiments import repair

    from labkit.views import charts_rounds as charts
    from labkit.views import rounds_page as views
    from labkit.views.tables import frame_html
    import polars as pl

    return accounting, charts, frame_html, pl, repair, views


@app.cell
def _(accounting):
    chapter = accounting.read_rounds(accounting.CHAPTER_EXAMPLE)
    table = accounting.per_round(chapter, resamples=1000)
    stats = accounting.round_stats(chapter)
    return chapter, stats, table


@app.cell
def _(mo, page, table):
    mo.md(page.paradox_md(table))
    return


@app.cell
def _(charts, table):
    charts.paradox_chart(table)
    return


@app.cell
def _(mo, page):
    _t = page.STOP_THRESHOLD
    threshold = mo.ui.slider(_t.start, _t.stop, value=_t.value, step=_t.step, label=_t.label, show_value=True)
    project = mo.ui.switch(value=True, label=page.STOP_PROJECT_LABEL)
    mo.vstack([mo.md("## When to stop"), threshold, project])
    return project, threshold


@app.cell
def _(mo, page, project, stats, threshold):
    mo.md(page.stop_md(threshold.value, project.value, stats))
    return


@app.cell
def _(charts, mo, page, table):
    mo.vstack([charts.rates_chart(table, title=page.RATES_TITLE), mo.md(page.CONSTRUCTED)])
    return


@app.cell
def _(chapter, mo, page, stats):
    # Each round's page is built once by labkit (chart as SVG); the stepper shows it in the browser.
    chapter_step = mo.ui.anywidget(page.chapter_stepper(chapter, stats))
    mo.vstack([mo.md("### Round by round: who moved"), chapter_step])
    return


@app.cell
def _(accounting, chapter, charts, frame_html, mo, page, views):
    _slices = accounting.per_slice(chapter, resamples=1000)
    mo.vstack(
        [
            mo.md("### Per slice: the average hides where the damage is"),
            mo.md(page.CONSTRUCTED),
            charts.slices_chart(_slices, title=page.SLICES_TITLE),
            mo.Html(frame_html(views.slice_table(_slices))),
        ]
    )
    return


@app.cell
def _(mo, page, repair):
    cases = repair.load_cases()
    mo.md(page.cases_md(cases))
    return (cases,)


@app.cell
def _(mo, page):
    def _slider(name):
        _c = page.REPAIR[name]
        return mo.ui.slider(_c.start, _c.stop, value=_c.value, step=_c.step, label=_c.label, show_value=True)

    p_fix, fix_decay, p_break, break_growth, n_rounds = map(_slider, ["p_fix", "fix_decay", "p_break", "break_growth", "n_rounds"])
    _s = page.REPAIR["seed"]
    seed = mo.ui.number(start=_s.start, stop=_s.stop, value=_s.value, label=_s.label)

    def _row(*xs):  # each "× per round" right beside the probability it scales
        return mo.hstack(list(xs), justify="start", gap=2)

    mo.vstack([_row(p_fix, fix_decay), _row(p_break, break_growth), _row(n_rounds, seed)])
    return break_growth, fix_decay, n_rounds, p_break, p_fix, seed


@app.cell
def _(page):
    # Every verdict is cached in build/ (keyed by candidate, suite, validator, Python and pytest):
    # a setting's first run validates for real (seconds to minutes), later runs and slider moves reuse it.
    checker = page.verdict_checker()
    return (checker,)


@app.cell
def _(break_growth, cases, checker, fix_decay, mo, n_rounds, p_break, p_fix, page, seed):
    # At the sliders' defaults this reads the recorded run (data/diminishing_returns/repair_run.sqlite);
    # any other setting runs now through the engine (real pytest runs, cached in build/).
    with mo.status.spinner(title=f"{len(cases)} cases through the engine (real pytest runs, cached)"):
        result = page.real_run(cases, checker, p_fix.value, fix_decay.value, p_break.value, break_growth.value,
                               n_rounds.value, seed.value)  # fmt: skip
    _saved = checker.cache.save()  # (not shown: the path is no result)
    return (result,)


@app.cell
def _(charts, frame_html, mo, page, project, result, threshold, views):
    real_table = result.per_round(resamples=1000)
    mo.vstack(
        [
            mo.md(page.real_md(result, threshold.value, project.value)),
            charts.paradox_chart(real_table, title=page.real_title(result)),
            mo.Html(frame_html(views.round_table(real_table))),
        ]
    )
    return (real_table,)


@app.cell
def _(mo, page, result):
    _stepper = page.real_stepper(result)
    mo.stop(_stepper is None)
    real_step = mo.ui.anywidget(_stepper)
    mo.vstack([mo.md("### Round by round on the real cases"), real_step])
    return


@app.cell
def _(frame_html, mo, result, views):
    mo.vstack([mo.md("### Per slice on the real cases"), mo.Html(frame_html(views.slice_table(result.per_slice(resamples=1000))))])
    return


@app.cell
def _(cases, checker, mo, page):
    mo.md(page.oscillation_md(cases, checker))
    return


@app.cell
def _(mo):
    stability = mo.ui.run_button(label="re-run every original a few times, bypassing the cache")
    mo.vstack([mo.md("## Fix acceptance first: is the validator stable?"), stability])
    return (stability,)


@app.cell
def _(cases, checker, frame_html, mo, page, pl, stability):
    _rows = page.stability_rows(checker, cases, every=stability.value)
    mo.vstack([mo.md(page.STABILITY), mo.Html(frame_html(pl.DataFrame(_rows)))])
    return


@app.cell(hide_code=True)
def _(cases, mo, page):
    from labkit.views.export import STATIC_NOTE, is_static_export

    yours_static = is_static_export()
    yours_pick = mo.ui.dropdown(options=page.yours_choices(cases), value=next(iter(page.yours_choices(cases))),
                                label="Case", disabled=yours_static)  # fmt: skip
    mo.vstack([mo.md(page.YOURS), yours_pick, mo.md(f"_{STATIC_NOTE}_") if yours_static else mo.md("")])
    return yours_pick, yours_static


@app.cell(hide_code=True)
def _(cases, mo, page, yours_pick, yours_static):
    from labkit.experiments import repair_yours

    yours_case = next(c for c in cases if c.id == yours_pick.value)
    yours_hypothesis = mo.ui.text_area(
        value="",
        label="Your hypothesis (one falsifiable cause)",
        placeholder="e.g. the condition treats some inputs as the wrong kind",
        full_width=True,
        disabled=yours_static,
    )
    yours_diff = mo.ui.code_editor(value=repair_yours.template(yours_case), language="diff",
                                   label=f"Your patch (a unified diff of {yours_case.module})", disabled=yours_static)  # fmt: skip
    yours_run = mo.ui.run_button(label="Test my patch", disabled=yours_static)
    mo.vstack([
        mo.md(page.yours_case_md(yours_case)),
        yours_hypothesis,
        yours_diff,
        yours_run,
    ])
    return repair_yours, yours_case, yours_diff, yours_hypothesis, yours_run


@app.cell
def _(checker, mo, page, repair_yours, yours_case, yours_diff, yours_hypothesis, yours_run):
    mo.stop(not yours_run.value, mo.md(page.YOURS_WAIT))
    with mo.status.spinner(title="Testing your patch (a real pytest run)…", remove_on_exit=True):
        yours = repair_yours.try_patch(yours_case, yours_hypothesis.value, yours_diff.value, checker=checker)
    mo.Html(page.yours_html(yours, yours_case))
    return


@app.cell(hide_code=True)
def _(mo):
    # stopping behaviour and planning, measured (seed 002 §7), read from its recording
    from labkit.views import stopping_page as stopping

    mo.vstack([mo.md(stopping.INTRO), mo.Html(stopping.audit_html()), mo.md(stopping.PLANNING),
               mo.Html(stopping.planning_html()), mo.md(stopping.WRONG_TOOL), mo.md(stopping.wrong_tool_md()),
               mo.Html(stopping.wrong_tool_html())])  # fmt: skip
    return


@app.cell(hide_code=True)
def _(mo):
    from labkit.views import best_of_n_page as bon

    bon_grid = bon.grid()  # SIMULATED, numpy: milliseconds
    mo.md(bon.BEST_OF_N)
    return bon, bon_grid


@app.cell
def _(bon, bon_grid, mo):
    _chart = mo.ui.altair_chart(bon.best_of_n_chart(bon_grid), chart_selection=False, legend_selection=False)
    mo.vstack([_chart, mo.Html(bon.best_of_n_html(bon_grid))])
    return


@app.cell(hide_code=True)
def _(mo):
    from labkit.views.glossary import glossary_html

    mo.Html(glossary_html(["net", "stop_reasons", "f2p", "p2p"]))
    return


if __name__ == "__main__":
    app.run()

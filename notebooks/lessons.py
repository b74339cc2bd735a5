import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium", app_title="Five lessons, each a run")


@app.cell(hide_code=True)
def _():
    import marimo as mo

    return (mo,)


@app.cell(hide_code=True)
def _(mo):
    from labkit.views import lessons as page

    mo.md(page.INTRO)
    return (page,)


@app.cell(hide_code=True)
def _():
    from labkit.experiments.lessons import bound_reflection, coverage, irreversible as effects, layer_figures as metrics, free_shipping as test_change
    from labkit.experiments.lessons import verdicts as lesson_verdicts
    from labkit.record.ledger import Ledger
    from labkit.views.tables import frame_html

    checker = lesson_verdicts.checker()  # one verdict cache: build/'s and the recorded verdicts (data/lessons/); a candidate they lack runs pytest once
    return Ledger, bound_reflection, checker, coverage, effects, frame_html, metrics, test_change


@app.cell
def _(checker, coverage, frame_html, mo, page):
    arms = coverage.counterfactual(checker)
    _saved = checker.cache.save()
    mo.vstack([mo.md(page.COVERAGE), mo.Html(frame_html(page.coverage_frame(arms))), mo.md(page.COVERAGE_CAPTION)])
    return


@app.cell
def _(checker, mo, page, test_change):
    walk = test_change.walkthrough(checker)
    _saved = checker.cache.save()
    mo.vstack([mo.md(page.TEST_CHANGE), mo.md(page.test_change_md(walk))])
    return (walk,)


@app.cell
def _(frame_html, mo, page, walk):
    mo.vstack([mo.md(page.REVALIDATION_CAPTION), mo.Html(frame_html(page.revalidation_frame(walk)))])
    return


@app.cell
def _(Ledger, bound_reflection, frame_html, mo, page):
    tool_ledger = Ledger()
    unbound, bound = bound_reflection.compare(tool_ledger)
    mo.vstack([
        mo.md(page.BOUND),
        mo.Html(frame_html(page.tool_frame([unbound, bound]))),
        mo.ui.altair_chart(page.spend_chart(page.spend_frame([unbound, bound], tool_ledger), bound_reflection.BUDGET),
                           chart_selection=False, legend_selection=False),
        mo.md(page.commands_md(unbound, bound_reflection.BUDGET)),
        mo.md(page.bound_md(bound, tool_ledger)),
    ])
    return


@app.cell
def _(effects, frame_html, mo, page):
    gated, naive = effects.gated(), effects.naive()
    mo.vstack([
        mo.md(page.EFFECTS),
        mo.Html(frame_html(page.effect_frame(gated))),
        mo.Html(frame_html(page.checkpoint_frame(gated))),
        mo.md(page.effects_md(gated, naive)),
    ])
    return (gated,)


@app.cell
def _(effects, gated, mo, page):
    _steps = effects.effect_steps(gated.ledger, gated.run_id)
    mo.vstack([mo.md(page.EFFECTS_HEAD), mo.ui.anywidget(page.effect_browser(_steps))])
    return


@app.cell
def _(frame_html, metrics, mo, page):
    lm = metrics.recorded()  # the units' layer metrics, measured once by their runs and recorded (data/lessons/)
    mo.vstack([
        mo.md(page.METRICS),
        mo.Html(frame_html(page.metrics_frame(lm))),
        mo.Html(frame_html(page.units_frame(lm))),
        mo.md(page.METRICS_CAPTION),
        mo.md(page.recorded_source(metrics.record())),
    ])
    return


@app.cell(hide_code=True)
def _(mo):
    from labkit.experiments.lessons import plan_state, triage
    from labkit.views import diagnosis

    mo.md(diagnosis.DIAGNOSIS)
    return diagnosis, plan_state, triage


@app.cell
def _(diagnosis, frame_html, mo, triage):
    _outcomes = triage.read()  # the recording: every candidate was run by the validator when it was made
    mo.vstack([
        mo.md(diagnosis.TRIAGE),
        mo.Html(frame_html(diagnosis.triage_summary_frame(_outcomes))),
        mo.md(diagnosis.triage_md(_outcomes)),
        mo.Html(frame_html(diagnosis.triage_cases_frame(_outcomes))),
    ])
    return


@app.cell
def _(Ledger, checker, diagnosis, frame_html, mo, plan_state):
    _ledger = Ledger()
    _story = plan_state.story(checker, _ledger)
    _saved = checker.cache.save()
    mo.vstack([
        mo.md(diagnosis.PLAN_STATE),
        mo.Html(frame_html(diagnosis.plan_frame(_story))),
        mo.md(diagnosis.plan_state_md(_story)),
        mo.Html(frame_html(diagnosis.restores_frame(_story))),
        mo.md(diagnosis.restores_caption(_story)),
        mo.Html(frame_html(diagnosis.checkpoints_frame(_ledger, _story.run_id))),
    ])
    return


@app.cell(hide_code=True)
def _(mo, page):
    mo.Html(page.glossary())
    return


if __name__ == "__main__":
    app.run()

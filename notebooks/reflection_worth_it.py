import marimo

__generated_with = "0.25.2"
app = marimo.App(
    width="medium",
    app_title="Is reflection worth it? Same budget, hidden tests",
)


@app.cell(hide_code=True)
def _():
    import marimo as mo

    return (mo,)


@app.cell(hide_code=True)
def _(mo):
    from labkit.views import arms_page as page

    mo.md(page.INTRO)
    return (page,)


@app.cell(hide_code=True)
def _(mo):
    from labkit.views import evidence_card_table as card_view

    mo.Html(card_view.recorded_real_card())  # the layer's evidence card, read from a recorded real run's ledger
    return


@app.cell(hide_code=True)
def _():
    from labkit.views import arms_steps as steps
    from labkit.views.tables import frame_html

    return frame_html, steps


@app.cell
def _(mo, page):
    def _slider(c):
        return mo.ui.slider(c.start, c.stop, value=c.value, step=c.step, label=c.label, show_value=True)

    budget = _slider(page.BUDGET)
    policy = mo.ui.dictionary({k: _slider(c) for k, c in page.SIM.items()}).form(
        submit_button_label="re-run the simulated sweep with these parameters", bordered=False
    )
    mo.vstack([budget, mo.accordion({"the simulated policy's parameters": policy})])
    return budget, policy


@app.cell
def _(budget, mo, page, policy):
    # the default setting is the recorded sweep (opens at once); labkit runs any other setting
    # (real engine and validator, simulated policy) and caches it per setting
    with mo.status.spinner(title="running the simulated sweep (first time per setting: tens of seconds)"):
        sim, sim_label = page.simulated(budget.value, page.sim_settings(policy.value))
    return sim, sim_label


@app.cell
def _(budget, frame_html, mo, page, sim, sim_label):
    mo.vstack(
        [
            mo.md(page.budget_md(sim, budget.value, sim_label)),
            page.arms_chart(sim, page.SIM_TITLE),
            mo.Html(frame_html(page.arms_frame(sim))),
            mo.md(page.COVERAGE_MD),
            mo.Html(frame_html(page.spend_frame(sim))),
        ]
    )
    return


@app.cell
def _(frame_html, mo, page, sim):
    _flips = page.flip_frame(sim)
    mo.vstack([mo.md(page.FLIPS_MD), mo.md(page.flips_md(_flips)), mo.Html(frame_html(_flips))])
    return


@app.cell
def _(frame_html, mo, page):
    from labkit.views import arms_real

    # one caption and one table for the three recorded suites; the commands stay folded away
    real = page.real_ledgers()
    mo.vstack([mo.md(arms_real.real_intro(real)), mo.Html(frame_html(arms_real.real_table(real))), mo.Html(arms_real.commands_html(real))])
    return (real,)


@app.cell
def _(mo, page, real, steps):
    # every page built once by labkit from the recorded ledger; stepping happens in the browser
    arms_step = mo.ui.anywidget(steps.case_stepper(real["humaneval"][0]))
    mo.vstack([mo.md(page.STEPPER_MD), arms_step])
    return


@app.cell(hide_code=True)
def _(mo):
    # batch incidents and conditional subsets (seed 002 §4), read from their recording
    from labkit.views import incident_page as incident

    mo.vstack([mo.md(incident.INTRO), mo.Html(incident.batches_html()), mo.md(incident.summary_md()),
               mo.md(incident.MECHANISM), mo.Html(incident.mechanism_html())])  # fmt: skip
    return


@app.cell(hide_code=True)
def _(mo):
    from labkit.views.glossary import glossary_html

    mo.Html(glossary_html(["f2p", "p2p", "stop_reasons", "decisions"]))
    return


@app.cell(hide_code=True)
def _(mo):
    # a published run re-graded by labkit: read from data/published/reflexion, never simulated
    from labkit.views import published_page as published

    published_rows = published.ladder()
    mo.md(published.INTRO)
    return published, published_rows


@app.cell
def _(frame_html, mo, published, published_rows):
    mo.vstack(
        [
            published.ladder_chart(published_rows),
            mo.Html(frame_html(published.ladder_frame(published_rows))),
            mo.md(published.evalplus_md(published_rows)),
        ]
    )
    return


@app.cell
def _(frame_html, mo, published, published_rows):
    mo.vstack(
        [
            mo.md(published.WINS_MD),
            mo.Html(frame_html(published.wins_frame(published_rows))),
            mo.md(published.REFLECTIONS_MD),
            mo.Html(frame_html(published.reflections_frame())),
            mo.md(published.self_tests_md()),
            mo.Html(published.beliefs_html()),
            mo.md(published.PUBLISHED_MD),
            mo.Html(frame_html(published.published_frame(published_rows))),
        ]
    )
    return


@app.cell
def _(mo, published, published_rows):
    problem = mo.ui.dropdown(
        published.problem_choices(published_rows),
        value=published.problem_choices(published_rows)[0],
        label="step through one problem (Reflexion's wins after reflecting first)",
    )
    problem
    return (problem,)


@app.cell
def _(mo, problem, published, published_rows):
    # every page built once from the logs and the ladder; stepping happens in the browser
    mo.ui.anywidget(published.problem_stepper(problem.value, published_rows))
    return


@app.cell
def _(frame_html, mo, published, published_rows):
    mo.vstack(
        [
            mo.md(published.CALIBRATION_MD),
            mo.Html(frame_html(published.calibration_frame(published_rows))),
        ]
    )
    return


if __name__ == "__main__":
    app.run()

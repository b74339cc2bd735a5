import marimo

__generated_with = "0.25.2"
app = marimo.App(
    width="medium",
    app_title="User B sees user A's price",
)


@app.cell(hide_code=True)
def _():
    import marimo as mo

    return (mo,)


@app.cell(hide_code=True)
def _(mo, page):
    mo.md(page.LEAK)
    return


@app.cell(hide_code=True)
def _(mo):
    from labkit.views import evidence_card_table as card_view

    mo.Html(card_view.cache_card())  # the layer's evidence card, read from the main storyline's ledger
    return


@app.cell(hide_code=True)
def _():
    from labkit.experiments import cache_isolation as cache_case
    from labkit.views import cache_page as page
    from labkit.views.report import scores_frame, step_labels
    from labkit.views.charts_trace import scores_chart
    from labkit.views.export import STATIC_NOTE, is_static_export
    from labkit.views.step_card import trace_pages
    from labkit.views.stepper import Stepper

    static = is_static_export()
    return (
        STATIC_NOTE,
        Stepper,
        cache_case,
        page,
        scores_chart,
        scores_frame,
        static,
        step_labels,
        trace_pages,
    )


@app.cell
def _(mo, page):
    mo.Html(page.leak_html())
    return


@app.cell(hide_code=True)
def _(mo, page):
    mo.md(page.EVIDENCE)
    return


@app.cell(hide_code=True)
def _(STATIC_NOTE, cache_case, mo, page, static):
    branch = mo.ui.radio(
        options=page.storyline_options(),
        value=cache_case.BRANCHES["main"],
        label=page.STORYLINE_LABEL,
        disabled=static,
    )
    mo.vstack([branch, mo.md(f"_{STATIC_NOTE}_")]) if static else branch
    return (branch,)


@app.cell(hide_code=True)
def _(mo, page):
    @mo.cache
    def run_branch(name):
        _run = page.run_storyline(name)
        return _run.trace, _run.ledger

    return (run_branch,)


@app.cell
def _(branch, mo, run_branch):
    with mo.status.spinner(title="Running the loop (real pytest per candidate)…"):
        trace, ledger_frame = run_branch(branch.value)
    return ledger_frame, trace


@app.cell
def _(Stepper, cache_case, ledger_frame, mo, page, step_labels, trace, trace_pages):
    # Every step's card and ledger rows are computed once, here; the stepper shows them
    # in the browser and only chooses which one — stepping never re-runs the loop.
    suite = cache_case.case().suite
    stepper = mo.ui.anywidget(
        Stepper(len(trace.rounds) + 1, step_labels(trace), unit="step", pages=trace_pages(trace, suite, ledger_frame))
    )
    mo.vstack([stepper, mo.Html(page.glossary())])
    return (suite,)


@app.cell(hide_code=True)
def _(ledger_frame, mo, page, suite, trace):
    # Take the run home: the steps shown above and every ledger row, as files.
    _links = [
        mo.download(data=_f.data, filename=_f.filename, mimetype=_f.mimetype, label=_f.label)
        for _f in page.downloads(trace, suite, ledger_frame)
    ]
    mo.vstack([mo.md(page.DOWNLOAD_INTRO), mo.hstack(_links, justify="start", wrap=True)])
    return


@app.cell
def _(mo, page, scores_chart, scores_frame, suite, trace):
    mo.ui.altair_chart(
        scores_chart(scores_frame(trace, suite), title=page.scores_title()),
        chart_selection=False,
        legend_selection=False,
    )
    return


@app.cell(hide_code=True)
def _(STATIC_NOTE, mo, page, static):
    ask_model = mo.ui.run_button(label=page.real_model_button(), disabled=static)
    mo.vstack([
        mo.md(page.REAL_MODEL),
        mo.md(page.real_model_expectation()),
        ask_model,
        mo.md(f"_{STATIC_NOTE}_") if static else mo.md(""),
    ])
    return (ask_model,)


@app.cell
def _(Stepper, ask_model, mo, page, step_labels, suite, trace_pages):
    mo.stop(not ask_model.value)
    # the real-model control is the only one that reads LABKIT_MODEL
    with mo.status.spinner(title=page.REAL_MODEL_RUNNING, remove_on_exit=True) as _spinner:
        _asked = page.ask_real_model(on_progress=lambda _line: _spinner.update(subtitle=_line))
    mo.stop(_asked.trace is None, mo.md(page.real_model_md(_asked)))
    _trace = _asked.trace
    mo.vstack([
        mo.md(page.real_model_md(_asked)),
        mo.ui.anywidget(Stepper(len(_trace.rounds) + 1, step_labels(_trace), unit="step", pages=trace_pages(_trace, suite))),
        mo.md(page.real_model_lesson_md(_asked)),
    ])
    return


@app.cell(hide_code=True)
def _(STATIC_NOTE, cache_case, mo, page, static):
    your_hypothesis = mo.ui.text_area(
        value="",
        label=page.YOURS_HYPOTHESIS_LABEL,
        placeholder=page.YOURS_PLACEHOLDER,
        full_width=True,
        disabled=static,
    )
    your_diff = mo.ui.code_editor(value=cache_case.PATCH_TEMPLATE, language="diff", label=page.YOURS_DIFF_LABEL, disabled=static)
    your_run = mo.ui.run_button(label="Test my patch", disabled=static)
    mo.vstack([
        mo.md(page.YOURS),
        your_hypothesis,
        your_diff,
        your_run,
        mo.md(f"_{STATIC_NOTE}_") if static else mo.md(""),
    ])
    return your_diff, your_hypothesis, your_run


@app.cell
def _(cache_case, mo, page, suite, your_diff, your_hypothesis, your_run):
    mo.stop(not your_run.value, mo.md(page.YOURS_WAIT))
    with mo.status.spinner(title=page.YOURS_RUNNING, remove_on_exit=True):
        yours = cache_case.try_patch(your_hypothesis.value, your_diff.value)
    mo.Html(page.yours_html(yours, suite))
    return


@app.cell(hide_code=True)
def _(mo, page):
    mo.md(page.COMPARE)
    return


@app.cell
def _(mo, page):
    mo.Html(page.chapter_table_html())  # measured once by the engine and recorded (data/cache_isolation/)
    return


@app.cell(hide_code=True)
def _(mo, page):
    mo.md(page.REMEMBER)
    return


@app.cell
def _(cache_case, mo, page, trace):
    lesson = cache_case.lesson(trace)
    mo.md(page.lesson_md(lesson))
    return (lesson,)


@app.cell
def _(mo, page):
    # The wrong generalisation, run for real (labkit.experiments.memory.counterexample) and recorded
    mo.md(page.wrong_generalisation_md())
    return


if __name__ == "__main__":
    app.run()

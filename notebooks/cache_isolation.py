import marimo

__generated_with = "0.25.2"
app = marimo.App(
    width="medium",
    app_title="Cache isolation: evidence, not introspection",
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
def _():
    import polars as pl

    from labkit.experiments import cache_isolation as cache_case
    from labkit.views import cache_page as page
    from labkit.views.report import scores_frame, step_labels
    from labkit.views.charts_trace import scores_chart
    from labkit.views.downloads import FORMATS, encode, steps_frame
    from labkit.views.export import STATIC_NOTE, is_static_export
    from labkit.views.step_card import trace_pages
    from labkit.views.stepper import Stepper
    from labkit.views.tables import frame_html

    static = is_static_export()
    return (
        FORMATS,
        STATIC_NOTE,
        Stepper,
        cache_case,
        encode,
        frame_html,
        page,
        pl,
        scores_chart,
        scores_frame,
        static,
        step_labels,
        steps_frame,
        trace_pages,
    )


@app.cell
def _(cache_case, frame_html, mo, pl):
    served = pl.DataFrame(cache_case.leak_demo(), schema=["user", "product", "price served", "own price"], orient="row")
    mo.Html(frame_html(served))
    return


@app.cell(hide_code=True)
def _(mo, page):
    mo.md(page.EVIDENCE)
    return


@app.cell(hide_code=True)
def _(STATIC_NOTE, cache_case, mo, static):
    branch = mo.ui.radio(
        options={text: key for key, text in cache_case.BRANCHES.items()},
        value=cache_case.BRANCHES["main"],
        label="Reflector storyline (scripted: authored replies, whatever LABKIT_MODEL says)",
        disabled=static,
    )
    mo.vstack([branch, mo.md(f"_{STATIC_NOTE}_")]) if static else branch
    return (branch,)


@app.cell(hide_code=True)
def _(cache_case, mo):
    @mo.cache
    def run_branch(name):
        from labkit.record.ledger import Ledger

        ledger = Ledger()
        trace = cache_case.run(name, ledger=ledger)
        return trace, ledger.frame(trace.run_id)

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
def _(FORMATS, encode, ledger_frame, mo, steps_frame, suite, trace):
    # Take the run home: the steps shown above and every ledger row, as files.
    _steps = steps_frame(trace, suite)
    _links = [
        mo.download(
            data=encode(_frame, _fmt),
            filename=f"{trace.run_id}-{_what}.{_fmt}",
            mimetype=FORMATS[_fmt],
            label=f"{_what} · {_fmt.upper()}",
        )
        for _what, _frame in (("steps", _steps), ("ledger", ledger_frame))
        for _fmt in FORMATS
    ]
    mo.vstack([mo.md("**Download this run** (its steps and its ledger):"), mo.hstack(_links, justify="start", wrap=True)])
    return


@app.cell
def _(mo, scores_chart, scores_frame, suite, trace):
    mo.ui.altair_chart(
        scores_chart(scores_frame(trace, suite), title="Tests passing per step"),
        chart_selection=False,
        legend_selection=False,
    )
    return


@app.cell(hide_code=True)
def _(STATIC_NOTE, mo, static):
    ask_model = mo.ui.run_button(label="Ask a real model to reflect instead", disabled=static)
    mo.vstack([
        mo.md(
            "## Ask a real model\n\n"
            "The storylines above are **scripted**. Press the button to let a real model write the "
            "reflection record and the diff — by default SmolLM2-135M, in-process and offline "
            "(`LABKIT_MODEL` picks another). A tiny model mostly fails here, and that is the point: "
            "the loop does not trust the reflector, every bad reply is an explained round. Each "
            "round's card shows the model's raw reply."
        ),
        ask_model,
        mo.md(f"_{STATIC_NOTE}_") if static else mo.md(""),
    ])
    return (ask_model,)


@app.cell
def _(Stepper, ask_model, cache_case, mo, step_labels, suite, trace_pages):
    mo.stop(not ask_model.value)
    from labkit.models.choice import choose, label, problem

    _model = choose(None, default="labkit/smollm2")  # the real-model control reads LABKIT_MODEL
    _why = problem(_model)
    mo.stop(_why is not None, mo.md(f"**{_model} cannot be used here:** {_why} — the scripted run above stands."))
    with mo.status.spinner(title=f"{label(_model)} is reflecting (2 rounds at most)…", remove_on_exit=True):
        _trace = cache_case.run(model=_model, max_rounds=2, run_id="cache-real-model")
    _lesson = cache_case.lesson(_trace, _model)
    mo.vstack([
        mo.md(f"**Reflector: {label(_model)}** — step through its rounds:"),
        mo.ui.anywidget(Stepper(len(_trace.rounds) + 1, step_labels(_trace), unit="step", pages=trace_pages(_trace, suite))),
        mo.md(f"**Lesson:** {_lesson.lesson}" if _lesson else f"**{cache_case.NO_LESSON}.**"),
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
def _(cache_case, frame_html, mo):
    @mo.cache
    def chapter_table():
        return cache_case.compare()[0]

    mo.Html(frame_html(chapter_table()))
    return


@app.cell(hide_code=True)
def _(mo, page):
    mo.md(page.REMEMBER)
    return


@app.cell
def _(cache_case, mo, trace):
    lesson = cache_case.lesson(trace)
    mo.stop(lesson is None, mo.md(f"**{cache_case.NO_LESSON}**: this run did not end on a kept, verified fix."))
    mo.md(
        f"""
        **{lesson.lesson}**

        | field | value |
        |:---|:---|
        | condition | {lesson.condition} |
        | failure mode | {lesson.failure_mode} |
        | signal | {lesson.signal} |
        | strategy | {lesson.strategy} |
        | counter-example | {lesson.counterexample} |
        | source | {lesson.source} |
        | version | {lesson.version} |
        """
    )
    return (lesson,)


@app.cell
def _(mo):
    # The wrong generalisation, run for real (labkit.experiments.memory.counterexample), not authored text
    from labkit.experiments.memory import counterexample as _ce
    from labkit.views.memory_pages import counterexample_md as _md

    _run = _ce.run(_ce.Mix(users=100, products=200, requests=10_000, seeds=(0, 1, 2, 3)))
    mo.md("### The wrong generalisation, measured\n\n" + _md(_run))
    return


if __name__ == "__main__":
    app.run()

import marimo

__generated_with = "0.25.2"
app = marimo.App(
    width="medium",
    app_title="Memory across tasks: what to keep, and when not to use it",
)


@app.cell(hide_code=True)
def _():
    import marimo as mo

    return (mo,)


@app.cell(hide_code=True)
def _(mo):
    from labkit.views import memory_pages as page

    mo.md(page.INTRO)
    return (page,)


@app.cell(hide_code=True)
def _(mo, page):
    mo.md(page.REFLEXION)
    return


@app.cell
def _(page):
    rx_demo = page.reflexion_demo()  # a recording (data/memory/): nothing runs on open
    return (rx_demo,)


@app.cell
def _(mo, page, rx_demo):
    _caption, _stepper = page.reflexion_stepper(rx_demo)
    trial_step = mo.ui.anywidget(_stepper)
    mo.vstack([mo.md(_caption), trial_step])
    return


@app.cell(hide_code=True)
def _(mo, page):
    mo.md(page.COUNTEREXAMPLE)
    return


@app.cell
def _(mo, page):
    ce_run = page.counterexample_run()
    mo.md(page.counterexample_section(ce_run))
    return (ce_run,)


@app.cell(hide_code=True)
def _(mo, page):
    mo.md(page.SKILLS)
    return


@app.cell
def _(mo, page):
    mo.Html(page.skills_html())
    return


@app.cell(hide_code=True)
def _(mo, page):
    mo.md(page.REPLAY)
    return


@app.cell
def _(ce_run, mo, page):
    mo.Html(page.replay_html(ce_run))
    return


@app.cell(hide_code=True)
def _(mo):
    from labkit.views import memory_buffer as buf

    buf_rec = buf.load()  # a recording (data/memory/): nothing runs on open
    mo.md(buf.BUFFER)
    return buf, buf_rec


@app.cell
def _(buf, buf_rec, mo):
    mo.vstack([
        mo.ui.altair_chart(buf.buffer_chart(buf_rec), chart_selection=False, legend_selection=False),
        mo.Html(buf.buffer_html(buf_rec)),
    ])  # fmt: skip
    return


@app.cell
def _(buf, buf_rec, mo):
    mo.vstack([
        mo.md(buf.TRUNCATION),
        mo.ui.altair_chart(buf.truncation_chart(buf_rec), chart_selection=False, legend_selection=False),
        mo.Html(buf.truncation_html(buf_rec)),
    ])  # fmt: skip
    return


@app.cell
def _(buf, mo):
    mo.Html(buf.smollm2_html(buf.smollm2()))
    return


@app.cell(hide_code=True)
def _(mo):
    from labkit.views import memory_loops as loops

    loops_rec = loops.load()  # a recording (data/memory/loops.json): nothing runs on open
    mo.md(loops.BELIEF)
    return loops, loops_rec


@app.cell
def _(loops, loops_rec, mo):
    mo.Html(loops.belief_html(loops_rec))
    return


@app.cell
def _(loops, loops_rec, mo):
    mo.vstack([mo.md(loops.UNIFIED), mo.Html(loops.unified_html(loops_rec))])
    return


@app.cell
def _(loops, mo):
    fork_rec = loops.load_fork()  # a recording (data/memory/fork.json): nothing runs on open
    _chart = mo.ui.altair_chart(loops.fork_chart(fork_rec), chart_selection=False, legend_selection=False)
    mo.vstack([mo.md(loops.FORK), _chart, mo.Html(loops.fork_html(fork_rec))])
    return


@app.cell(hide_code=True)
def _(mo):
    # ending a task (seed 002 §8), read from its recording: nothing runs on open
    from labkit.views import ending_page as ending

    mo.vstack([mo.md(ending.INTRO), mo.Html(ending.candidates_html()), mo.Html(ending.exposure_html()),
               mo.md(ending.summary_md())])  # fmt: skip
    return


if __name__ == "__main__":
    app.run()

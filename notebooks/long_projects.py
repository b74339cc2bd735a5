import marimo

__generated_with = "0.25.2"
app = marimo.App(
    width="medium",
    app_title="Long projects: carried by artifacts and evidence",
)


@app.cell(hide_code=True)
def _():
    import marimo as mo

    return (mo,)


@app.cell(hide_code=True)
def _(mo):
    from labkit.views import long_projects as page

    rec = page.load()  # the committed recording (data/long_projects/): nothing runs on open
    mo.md(page.INTRO)
    return page, rec


@app.cell
def _(mo, page, rec):
    run = page.showcase(rec)
    _caption, _stepper = page.stepper(run)
    iteration_step = mo.ui.anywidget(_stepper)
    mo.vstack([mo.md(page.STEPPER), mo.md(_caption), iteration_step])
    return (run,)


@app.cell
def _(mo, page, run):
    mo.vstack([
        mo.md(page.PROGRESS),
        mo.ui.altair_chart(page.progress_chart(run), chart_selection=False, legend_selection=False),
        mo.Html(page.progress_html(run)),
    ])  # fmt: skip
    return


@app.cell
def _(mo, page, rec):
    mo.vstack([
        mo.md(page.COMPARE),
        mo.ui.altair_chart(page.compare_chart(rec), chart_selection=False, legend_selection=False),
        mo.Html(page.compare_html(rec)),
    ])  # fmt: skip
    return


@app.cell
def _(mo, page, rec):
    mo.vstack([mo.md(page.SAME_SOURCE), mo.Html(page.qa_html(rec))])
    return


@app.cell(hide_code=True)
def _(mo):
    from labkit.views import long_merge as merge_page
    from labkit.views.tables import frame_html as merge_frame_html

    merge_rec = merge_page.recorded()  # data/long_projects/merge_recording.json: nothing runs on open
    mo.vstack([mo.md(merge_page.merge_md(merge_rec)), mo.Html(merge_frame_html(merge_page.merge_frame(merge_rec)))])
    return merge_frame_html, merge_page, merge_rec


@app.cell(hide_code=True)
def _(merge_frame_html, merge_page, merge_rec, mo):
    mo.vstack([
        merge_page.stale_chart(merge_rec),
        mo.md(merge_page.CRITIQUES),
        mo.Html(merge_frame_html(merge_page.critiques_frame(merge_rec))),
    ])  # fmt: skip
    return


if __name__ == "__main__":
    app.run()

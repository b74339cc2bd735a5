import marimo

__generated_with = "0.25.2"
app = marimo.App(
    width="medium",
    app_title="Judges are biased; asking again is not evidence",
)


@app.cell(hide_code=True)
def _():
    import marimo as mo

    return (mo,)


@app.cell(hide_code=True)
def _(mo):
    from labkit.views import judge_page as page

    mo.md(page.INTRO)
    return (page,)


@app.cell
def _():
    from labkit.experiments.judging import selfcorrect as sc
    from labkit.experiments.judging.simjudge import SimulatedJudge
    from labkit.models.cache import open_cache
    from labkit.views import charts_judge as cj

    return SimulatedJudge, cj, open_cache, sc


@app.cell(hide_code=True)
def _():
    from labkit.views.tables import frame_html

    return (frame_html,)


@app.cell
def _(mo, page):
    _options, _default = page.model_options()
    model_pick = mo.ui.dropdown(_options, value=_default, label="Model (offline default first; $LABKIT_MODEL)")
    lead_go = mo.ui.run_button(label="ask the model now")
    mo.hstack([model_pick, lead_go], justify="start")
    return lead_go, model_pick


@app.cell
def _(lead_go, mo, model_pick, open_cache, page):
    # On open: the recorded SmolLM2 judgments, replayed (no model runs). The button asks live.
    cache = open_cache()
    lead_recorded = not lead_go.value
    if lead_recorded:
        real_judge = page.model_judge(model_pick.value, cache)
        (lead, lead_seen), lead_why = page.recorded_lead(), None
    else:
        with mo.status.spinner(title=f"{model_pick.value} judges a pair in both orders…"):
            real_judge, lead, lead_seen, lead_why = page.lead_pair(model_pick.value, cache)
    return cache, lead, lead_recorded, lead_seen, lead_why, real_judge


@app.cell
def _(cj, lead, lead_recorded, lead_seen, lead_why, mo, page):
    from labkit.views.judge_class import for_class

    _fallback = mo.callout(mo.md(
        f"**{for_class(lead_why)}** — so this is the **simulated judge** (position bias β = 1.5) instead."), kind="warn")
    _recorded = mo.callout(mo.md(page.RECORDED_NOTE.format(model=page.RECORDED_MODEL)), kind="info")
    _note = _fallback if lead_why else _recorded if lead_recorded else mo.md("")
    mo.vstack([_note, mo.Html(cj.swap_html(lead or lead_seen[-1]))])
    return


@app.cell(hide_code=True)
def _(mo, page):
    mo.md(page.BIAS)
    return


@app.cell
def _(mo, page):
    def _slider(name):
        _c = page.SIM[name]
        return mo.ui.slider(_c.start, _c.stop, _c.step, value=_c.value, label=_c.label, show_value=True)

    k, beta, phi, delta, n_questions = map(_slider, ["k", "beta", "phi", "delta", "n_questions"])
    mo.hstack([mo.vstack([k, beta, phi]), mo.vstack([delta, n_questions])])
    return beta, delta, k, n_questions, phi


@app.cell
def _(beta, delta, k, n_questions, page, phi):
    sim_swaps, sim = page.simulate(k.value, beta.value, phi.value, delta.value, int(n_questions.value))
    return sim, sim_swaps


@app.cell
def _(cj, mo, sim):
    mo.hstack([mo.ui.altair_chart(cj.position_chart([sim.position]), chart_selection=False, legend_selection=False),
               mo.ui.altair_chart(cj.scoring_chart([sim.position]), chart_selection=False, legend_selection=False)])
    return


@app.cell
def _(beta, delta, k, mo, page, phi, sim):
    mo.md(page.calibration_md(sim, k.value, beta.value, phi.value, delta.value))
    return


@app.cell
def _(cj, mo, sim):
    mo.hstack([
        mo.ui.altair_chart(cj.share_chart([sim.verbosity, sim.self_preference]), chart_selection=False,
                           legend_selection=False),
        mo.ui.altair_chart(cj.winrate_chart(sim.length), chart_selection=False, legend_selection=False),
    ])
    return


@app.cell(hide_code=True)
def _(mo, page):
    mo.md(page.LENGTH)
    return


@app.cell
def _(mo, page, sim_swaps):
    # Each pair's card is prepared once; the stepper shows them in the browser (no kernel per step).
    shown_swaps, _stepper = page.pair_stepper(sim_swaps)
    stepper = mo.ui.anywidget(_stepper)
    stepper
    return shown_swaps, stepper


@app.cell(hide_code=True)
def _(mo, page):
    mo.md(page.REAL)
    return


@app.cell
def _(mo, page):
    _n = page.REAL_N
    real_n = mo.ui.slider(_n.start, _n.stop, _n.step, value=_n.value, label=_n.label, show_value=True)
    real_go = mo.ui.run_button(label="run the judge battery")
    mo.hstack([real_n, real_go], justify="start")
    return real_go, real_n


@app.cell
def _(SimulatedJudge, beta, cache, delta, k, mo, page, phi, real_go, real_judge, real_n):
    mo.stop(not real_go.value, mo.md("_Press **run the judge battery** to call the model._"))
    real_swaps, real_why = page.real_battery(
        real_judge, cache, int(real_n.value),
        SimulatedJudge(k=k.value, beta=beta.value, phi=phi.value, delta=delta.value, seed=1, name="sim/fallback-judge"),
        progress=lambda title, total: mo.status.progress_bar(total=total, title=title, remove_on_exit=True),
    )  # fmt: skip
    return real_swaps, real_why


@app.cell
def _(cj, mo, page, real_swaps, real_why, sim):
    from labkit.experiments.judging import bias

    from labkit.views.judge_class import NO_REAL_JUDGE, for_class as _for_class

    real = bias.report(real_swaps)
    # a fallback judge is simulated too: never shown under "on a real model" beside the simulated one
    mo.stop(real_why is not None, mo.callout(mo.md(f"**{_for_class(real_why)}** — {NO_REAL_JUDGE}."), kind="warn"))
    mo.vstack([
        mo.md(page.real_md(real, real_swaps)),
        mo.hstack([mo.ui.altair_chart(cj.position_chart([sim.position, real.position]), chart_selection=False,
                                      legend_selection=False),
                   mo.ui.altair_chart(cj.scoring_chart([sim.position, real.position]), chart_selection=False,
                                      legend_selection=False)]),
    ])
    return


@app.cell(hide_code=True)
def _(mo):
    from labkit.views import judge_llmbar as llmbar_page

    mo.md(llmbar_page.INTRO)
    return (llmbar_page,)


@app.cell
def _(llmbar_page, mo):
    # the strategy is chosen here; the judge whose flips to step through, beside the stepper below
    llmbar_strategy, llmbar_judge = (mo.ui.dropdown(_options, value=_default, label=_label)
                                     for _label, _options, _default in (llmbar_page.STRATEGY, llmbar_page.FLIP_JUDGE))
    llmbar_strategy
    return llmbar_judge, llmbar_strategy


@app.cell
def _(frame_html, llmbar_page, llmbar_strategy, mo):
    # reads the committed LLMBar tables (data/published/llmbar); intervals: 1000 bootstrap resamples
    llmbar_scores = llmbar_page.scores_for(llmbar_strategy.value)
    llmbar_table = llmbar_page.table_people(llmbar_scores)
    mo.vstack([
        mo.ui.altair_chart(llmbar_page.accuracy_chart(llmbar_scores), chart_selection=False, legend_selection=False),
        mo.ui.altair_chart(llmbar_page.consistency_chart(llmbar_scores), chart_selection=False,
                           legend_selection=False),
        mo.ui.altair_chart(llmbar_page.shift_chart(llmbar_scores), chart_selection=False, legend_selection=False),
        mo.md(llmbar_page.claim_md(llmbar_strategy.value)),
        mo.md(llmbar_page.CLAIM_CAPTION), mo.Html(frame_html(llmbar_page.claim_people(), 1)),
        mo.md(llmbar_page.TABLE_CAPTION), mo.Html(frame_html(llmbar_table, 1)),
    ])  # fmt: skip
    return llmbar_scores, llmbar_table


@app.cell
def _(llmbar_judge, llmbar_page, llmbar_strategy, mo):
    # each flip's card is prepared once; the stepper shows them in the browser (no kernel per step)
    llmbar_flips, _stepper = llmbar_page.flip_stepper(llmbar_judge.value, llmbar_strategy.value)
    llmbar_flip_stepper = None if _stepper is None else mo.ui.anywidget(_stepper)
    mo.vstack([llmbar_judge, mo.md(llmbar_page.flips_md(llmbar_judge.value, llmbar_strategy.value, len(llmbar_flips))),
               mo.md("") if llmbar_flip_stepper is None else llmbar_flip_stepper])
    return llmbar_flip_stepper, llmbar_flips


@app.cell(hide_code=True)
def _(mo):
    from labkit.core.errors import ReferenceDataMissing
    from labkit.experiments.judging import leaderboard
    from labkit.views import charts_leaderboard as cl

    try:
        ae_board = leaderboard.load()
    except ReferenceDataMissing as _err:
        mo.stop(True, mo.callout(mo.md(f"**The AlpacaEval 2 section needs its data:** {_err}"), kind="danger"))
    ae = leaderboard.analyse(ae_board)
    ae_frame = cl.leaderboard_frame(ae_board, ae)
    return ae, ae_board, ae_frame, cl


@app.cell
def _(ae, mo, page):
    mo.md(page.ae_intro_md(ae))
    return


@app.cell
def _(ae, ae_frame, cl, mo):
    _raw, _lc = cl.length_charts(ae_frame, ae)
    mo.hstack([mo.ui.altair_chart(_raw, chart_selection=False, legend_selection=False),
               mo.ui.altair_chart(_lc, chart_selection=False, legend_selection=False)])
    return


@app.cell
def _(ae, ae_board, ae_frame, cl, mo, page):
    mo.hstack([mo.ui.altair_chart(cl.rank_moves_chart(ae_frame), chart_selection=False, legend_selection=False),
               mo.md(page.ae_lesson_md(ae, ae_board))], widths=[2, 3], align="start")
    return


@app.cell
def _(mo, page):
    mo.md(page.AE_METHODS)
    return


@app.cell
def _(mo):
    check_go = mo.ui.run_button(label="recompute now (~1 min)")
    return (check_go,)


@app.cell
def _(check_go, cl, mo, page):
    # On open: simulator_check()'s stored result (the tests recompute it); the button recomputes.
    from labkit.experiments.judging.simjudge import recorded_simulator_check, simulator_check

    variant_errors = mo.cache(simulator_check)() if check_go.value else recorded_simulator_check()
    _note = mo.md("_Computed just now._" if check_go.value else page.VARIANT_RECORDED)
    mo.vstack([mo.ui.altair_chart(cl.variant_chart(variant_errors), chart_selection=False, legend_selection=False),
               mo.md(page.variant_md(variant_errors)), _note, check_go])
    return (variant_errors,)


@app.cell
def _(mo, page):
    mo.md(page.INTRINSIC)
    return


@app.cell
def _(cj, mo, sc):
    from labkit.experiments.judging.random_run import recorded_random_run

    # its engine run (300 questions), recorded once: every answer as the hidden check scored it
    rand_run = recorded_random_run()
    mo.hstack([
        mo.ui.altair_chart(cj.stopping_chart(sc.accuracy(rand_run), sc.oracle_stopping(rand_run),
                                             "Random re-answerer (simulated)"),
                           chart_selection=False, legend_selection=False),
        mo.ui.altair_chart(cj.transitions_chart(sc.transitions(rand_run), "Its transitions (simulated)"),
                           chart_selection=False, legend_selection=False),
    ])
    return (rand_run,)


@app.cell
def _(mo, page):
    _n = page.SC_N
    # debounce: the value is sent on release, so dragging never re-runs (and re-draws) the charts below
    sc_n = mo.ui.slider(_n.start, _n.stop, _n.step, value=_n.value, label=_n.label, show_value=True, debounce=True)
    sc_go = mo.ui.run_button(label="run self-correction on the model")
    mo.hstack([sc_n, sc_go], justify="start")
    return sc_go, sc_n


@app.cell
def _(cache, mo, model_pick, page, sc_go, sc_n):
    if sc_go.value:
        lab_run, sc_why = page.self_correction(
            model_pick.value, cache, int(sc_n.value),
            progress=lambda title, total: mo.status.progress_bar(total=total, title=title, remove_on_exit=True),
        )  # fmt: skip
    else:
        lab_run, sc_why = None, None
    return lab_run, sc_why


@app.cell
def _(cj, frame_html, lab_run, mo, page, rand_run, sc, sc_why):
    # the published numbers as a table beside the chart: accuracy (%) per self-correction round
    _huang = page.huang_frame()
    _lab = page.lab_accuracies(rand_run, lab_run)
    _parts = [mo.ui.altair_chart(cj.accuracy_chart(sc.load_huang(), _lab), chart_selection=False,
                                 legend_selection=False),
              mo.vstack([mo.md("**Huang et al. (2024)**, accuracy %"), mo.Html(frame_html(_huang, 1))])]
    if lab_run is not None:
        _parts.append(mo.ui.altair_chart(cj.transitions_chart(sc.transitions(lab_run), cj.who(
            lab_run.answerer, lab_run.simulated)), chart_selection=False, legend_selection=False))
    from labkit.views.judge_class import for_class as _why

    _warn = mo.callout(mo.md(f"**{_why(sc_why)}** — fell back to the random re-answerer."), kind="warn")
    _hint = mo.md("_Press the button to add the model's own run._") if lab_run is None else mo.md("")
    # two side by side fit 1280 px; the model's transitions go below, never off the page
    mo.vstack([_warn if sc_why else _hint, mo.hstack(_parts[:2], justify="start", align="start", gap=2), *_parts[2:]])
    return


@app.cell
def _(frame_html, lab_run, mo):
    from labkit.views.judge_class import attempts_frame

    mo.stop(lab_run is None)
    mo.Html(frame_html(attempts_frame(lab_run)))
    return


@app.cell(hide_code=True)
def _(mo):
    # the selector cascade (seed 002 §2), read from its recording: nothing validated on open
    from labkit.views import cascade_page as cascade

    mo.vstack([mo.md(cascade.INTRO), mo.Html(cascade.section_html()), mo.md(cascade.summary_md())])
    return


@app.cell(hide_code=True)
def _(mo, page):
    mo.md(page.CLOSING)
    return


@app.cell(hide_code=True)
def _(mo):
    from labkit.views.glossary import glossary_html

    mo.Html(glossary_html(["scoring_rules", "beta", "letter_mass", "stop_reasons"]))
    return


if __name__ == "__main__":
    app.run()

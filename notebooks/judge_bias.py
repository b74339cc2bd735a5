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
    mo.md(r"""
    # Judges are biased; asking again is not evidence

    An LLM judge compares two answers and says which is better. Show it the same two
    answers in the other order and it may change its mind. Below, one pair of answers to
    an arithmetic question — one right, one wrong — is judged twice, with the answers
    swapped, by a real model running on this machine (choose another one if you like).
    """)
    return


@app.cell
def _():
    from labkit.experiments.judging import bias
    from labkit.experiments.judging import pair_files, pairs
    from labkit.experiments.judging import selfcorrect as sc
    from labkit.experiments.judging.judge import LETTER, ModelJudge, find_flip, judge_both, model_choices, open_cache, with_fallback
    from labkit.experiments.judging.simjudge import SimulatedJudge, simulated_own
    from labkit.views import charts_judge as cj
    from labkit.views.stepper import Stepper

    return (
        LETTER,
        ModelJudge,
        SimulatedJudge,
        Stepper,
        bias,
        cj,
        find_flip,
        judge_both,
        model_choices,
        open_cache,
        pair_files,
        pairs,
        sc,
        simulated_own,
        with_fallback,
    )


@app.cell(hide_code=True)
def _():
    from labkit.views.tables import bounded, frame_html

    return bounded, frame_html


@app.cell
def _(mo, model_choices):
    from labkit.models.gateway import is_simulated

    _options, _default = model_choices()
    # only models that can judge: the replay/scripted providers have no judge script to play
    _options = [m for m in _options if not is_simulated(m)] or [_default]
    model_pick = mo.ui.dropdown(_options, value=_default if _default in _options else _options[0],
                                label="Model (offline default first; $LABKIT_MODEL)")
    model_pick
    return (model_pick,)


@app.cell
def _(LETTER, ModelJudge, SimulatedJudge, find_flip, mo, model_pick, open_cache, pair_files, pairs, with_fallback):
    cache = open_cache()
    real_judge = ModelJudge(model_pick.value, template=LETTER, use_logprobs=True, cache=cache,
                            options={"timeout": 300})
    lead_pairs = pair_files.load_pairs(pairs.DATA_DIR / "correctness.jsonl")
    with mo.status.spinner(title=f"{model_pick.value} judges a pair in both orders…"):
        (lead, lead_seen), lead_judge, lead_why = with_fallback(
            lambda j: find_flip(j, lead_pairs, limit=4), real_judge, SimulatedJudge(k=2.0, beta=1.5))
    return cache, lead, lead_seen, lead_why, real_judge


@app.cell
def _(cj, lead, lead_seen, lead_why, mo):
    _fallback = mo.callout(mo.md(
        f"**{lead_why}** — so this is the **simulated judge** (position bias β = 1.5) instead."), kind="warn")
    mo.vstack([_fallback if lead_why else mo.md(""), mo.Html(cj.swap_html(lead or lead_seen[-1]))])
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    A small model asked for a single letter says **"A"** whatever A is: a pure position
    bias. Bigger judges do it less, but measurably ("swapping the order moves pairwise
    accuracy by more than 10%"). The usual fixes are to **judge both orders** and combine
    them, and to **control for length**, because judges also like long answers and their
    own answers.

    Careful, though: *inconsistency alone is not position bias*. A judge that is merely
    unsure about a close pair flips in both directions equally. Position bias is the
    **asymmetry**: "first slot both times" more often than "second slot both times".

    ## A judge whose biases you set

    The simulated judge picks slot A with probability
    σ(k·Δquality + β + φ·Δlength + δ·own). Move the sliders; the metrics below are computed
    from its verdicts on the project's pairs (right vs wrong answers, concise vs padded,
    writers of different lengths, its "own" answers), every figure with a bootstrap interval.
    """)
    return


@app.cell
def _(mo):
    k = mo.ui.slider(0.0, 6.0, 0.5, value=2.0, label="skill k", show_value=True)
    beta = mo.ui.slider(-2.0, 2.0, 0.1, value=1.0, label="position β", show_value=True)
    phi = mo.ui.slider(-2.0, 2.0, 0.1, value=0.8, label="length φ", show_value=True)
    delta = mo.ui.slider(-2.0, 2.0, 0.1, value=0.5, label="self δ", show_value=True)
    n_questions = mo.ui.slider(20, 400, 20, value=200, label="questions", show_value=True)
    mo.hstack([mo.vstack([k, beta, phi]), mo.vstack([delta, n_questions])])
    return beta, delta, k, n_questions, phi


@app.cell
def _(SimulatedJudge, bias, mo, pairs, simulated_own):
    @mo.cache
    def simulate(k, beta, phi, delta, n, seed=0):
        judge = SimulatedJudge(k=k, beta=beta, phi=phi, delta=delta, seed=seed)
        qs = pairs.make_questions(n, seed)
        swaps = judge.run(pairs.battery(qs, seed, simulated_own(qs), judge.name))
        return swaps, bias.report(swaps)

    return (simulate,)


@app.cell
def _(beta, delta, k, n_questions, phi, simulate):
    sim_swaps, sim = simulate(k.value, beta.value, phi.value, delta.value, n_questions.value)
    return sim, sim_swaps


@app.cell
def _(cj, mo, sim):
    mo.hstack([mo.ui.altair_chart(cj.position_chart([sim.position]), chart_selection=False, legend_selection=False),
               mo.ui.altair_chart(cj.scoring_chart([sim.position]), chart_selection=False, legend_selection=False)])
    return


@app.cell
def _(beta, bounded, delta, k, mo, phi, sim):
    _f = sim.fit

    def _shown(iv):
        return "not identifiable here" if iv is None else bounded(iv, separated=_f.separated)

    mo.md(f"""
    **Calibration.** Fitting the judge's own model back to its verdicts recovers what the
    sliders set (95% intervals, resampling pairs):

    | parameter | set | recovered |
    |---|---|---|
    | skill k | {k.value:.1f} | {_shown(_f.k)} |
    | position β | {beta.value:.1f} | {_shown(_f.beta)} |
    | length φ | {phi.value:.1f} | {_shown(_f.phi)} |
    | self δ | {delta.value:.1f} | {_shown(_f.delta)} |

    Set β = 0 and lower k: consistency drops on close pairs, yet "first" and "second" stay
    level and β̂ covers 0. With β > 0, accuracy depends on where the right answer is shown:
    {sim.position.gold_first} when it is A, {sim.position.gold_second} when it is B.
    """)
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
def _(mo):
    mo.md(r"""
    Length control (in the manner of AlpacaEval 2) fits
    logit P(writer preferred) = θ_writer + φ·tanh(standardised length difference) and reads
    the win rate with the length term set to zero. The padded and terse writers are exactly
    as accurate as the baseline: with φ > 0 their raw win rates drift apart, the
    length-controlled ones come back towards each other.

    Step through the judged pairs (right vs wrong answers) one at a time:
    """)
    return


@app.cell
def _(Stepper, cj, mo, sim_swaps):
    # Each pair's card is prepared once; the stepper shows them in the browser (no kernel per step).
    shown_swaps = [s for s in sim_swaps if s.pair.kind == "correctness"]
    stepper = mo.ui.anywidget(
        Stepper(len(shown_swaps), [s.pair.id for s in shown_swaps], unit="pair",
                pages=[cj.swap_html(s) for s in shown_swaps])
    )  # fmt: skip
    stepper
    return shown_swaps, stepper


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## The same battery on a real model

    Each question gives 6 pairs (right/wrong, concise/padded, padded-wrong, three writers),
    plus self-preference pairs where the model's own first answer was correct. Each pair is
    judged in both orders; calls are cached on disk (`runs/cache.sqlite`), so a second run
    costs nothing.
    """)
    return


@app.cell
def _(mo):
    real_n = mo.ui.slider(1, 30, 1, value=2, label="questions", show_value=True)
    real_go = mo.ui.run_button(label="run the judge battery")
    mo.hstack([real_n, real_go], justify="start")
    return real_go, real_n


@app.cell
def _(ModelJudge, SimulatedJudge, beta, cache, delta, judge_both, k, mo, pairs, phi, real_go, real_judge, real_n, sc,
      simulated_own, with_fallback):
    mo.stop(not real_go.value, mo.md("_Press **run the judge battery** to call the model._"))
    _qs = pairs.make_questions(real_n.value, seed=1)

    def _battery(j):
        _answerer = sc.ModelAnswerer(j.name, max_tokens=128, cache=cache, options={"timeout": 300}) if isinstance(j, ModelJudge) else None
        _own = sc.own_answers(_answerer, _qs) if _answerer else simulated_own(_qs)
        _ps = pairs.battery(_qs, 1, _own, j.name)
        with mo.status.progress_bar(total=len(_ps), title=f"{j.name}: {len(_ps)} pairs × 2 orders",
                                    remove_on_exit=True) as _bar:
            return judge_both(j, _ps, progress=lambda _k: _bar.update())

    real_swaps, _used, real_why = with_fallback(_battery, real_judge, SimulatedJudge(
        k=k.value, beta=beta.value, phi=phi.value, delta=delta.value, seed=1, name="sim/fallback-judge"))
    return real_swaps, real_why


@app.cell
def _(bias, bounded, cj, mo, real_swaps, real_why, sim):
    real = bias.report(real_swaps)
    _warn = mo.callout(mo.md(f"**{real_why}** — fell back to the simulated judge."), kind="warn")
    _self = ("no correct own answers, so self-preference cannot be measured for this model"
             if real.self_preference is None else f"self-preference share {real.self_preference.share}")
    mo.vstack([
        _warn if real_why else mo.md(""),
        mo.md(f"{cj.who(real.judge, real.simulated)}: {len(real_swaps)} pairs, "
              f"**{real.n_unparseable} replies gave no verdict** (counted, not dropped); {_self}; "
              f"fitted position bias β̂ = {bounded(real.fit.beta, separated=real.fit.separated) if real.fit else 'n/a'}."),
        mo.hstack([mo.ui.altair_chart(cj.position_chart([sim.position, real.position]), chart_selection=False,
                                      legend_selection=False),
                   mo.ui.altair_chart(cj.scoring_chart([sim.position, real.position]), chart_selection=False,
                                      legend_selection=False)]),
    ])
    return


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
def _(ae, mo):
    _p, _n = ae.provenance, ae.null_model
    mo.md(f"""
    ## Real judge data: AlpacaEval 2

    Everything above used a simulated judge or a small local one. Here is a real judge at work:
    the **AlpacaEval 2 leaderboard** — {ae.n_models} models, each judged against the same baseline
    (`{_p.baseline}`, {_p.baseline_known_as}) on {_p.n_instructions} instructions by {_p.judge}
    (`{_p.judge_model}`, AlpacaEval's `{_p.annotator}` configuration). The file ships in the
    **`{_p.package}` {_p.version}** package (`{_p.file}`); labkit reads it, nothing is fetched,
    and every figure below is computed here from that file.

    Each point is a model: its average output length against its win rate — raw, and
    length-controlled (LC: AlpacaEval's logistic fit read with the length term at zero).
    """)
    return


@app.cell
def _(ae, ae_frame, cl, mo):
    _raw, _lc = cl.length_charts(ae_frame, ae)
    mo.hstack([mo.ui.altair_chart(_raw, chart_selection=False, legend_selection=False),
               mo.ui.altair_chart(_lc, chart_selection=False, legend_selection=False)])
    return


@app.cell
def _(ae, ae_board, ae_frame, cl, mo):
    _n, _base = ae.null_model, ae_board.entry(ae.provenance.baseline)
    _top = " — above every real model" if _n.lc_rank == 1 else ""
    mo.hstack([mo.ui.altair_chart(cl.rank_moves_chart(ae_frame), chart_selection=False, legend_selection=False),
               mo.md(f"""
    **Length explains a lot of the raw ranking** (r = {ae.raw.r}) and still a fair part of the
    length-controlled one (r = {ae.lc.r}): length control weakens the verbosity effect, it does
    not remove it. Models that pad move down under LC; terse ones (the `_concise` runs) move up.

    **And then there is `{_n.name}`.** It is not a model: it returns *one constant reply*,
    written to steer the judge, whatever the instruction. Raw win rate {_n.raw:.1%} (rank
    {_n.raw_rank} of {ae.n_models}); length-controlled **{_n.lc:.1%}, rank {_n.lc_rank}**{_top}.
    Its reply is {_n.avg_length} characters against the baseline's {_base.avg_length}, and length
    control, which credits the shorter answer, {"*raised*" if _n.lc > _n.raw else "lowered"} it.

    The lesson: a judge can be gamed, and a correction for one bias can amplify an exploit.
    Flooding an LLM judge is a reward hack. On a verifiable task a judge must never be the
    only oracle — check the answer, run the test.
    """)], widths=[2, 3], align="start")
    return


@app.cell
def _(mo):
    mo.md(r"""
    ### Two ways to control for length

    labkit fits **one length coefficient φ shared by all models**, with the pooled SD of the
    length differences. AlpacaEval fits **φ per model** with that model's own SD, and an
    **L1 penalty chosen by cross-validation** — which can snap a model's term to exactly 0,
    a win rate of exactly 50%. Both are in `lengthctl.length_controlled` (`variant="shared"` /
    `"alpacaeval"`); fitted without the penalty, the per-model option reproduces AlpacaEval's
    minimal formula, and both agree with statsmodels to 10⁻⁶ (tests/test_judge_reference.py).

    On the simulated judge the truth is known: the win rate each writer would get with the
    length term removed. Below, how far each variant lands from it (3 writers × 5 seeds × 800
    questions per length scale). **Caveat:** the simulated judge has one φ for everyone —
    labkit's own assumption — so this shows what the per-model, penalised fit costs *when that
    assumption holds*, not which is right for GPT-4 Turbo.
    """)
    return


@app.cell
def _(cl, mo):
    from labkit.experiments.judging.simjudge import simulator_check

    variant_errors = mo.cache(simulator_check)()
    _rows = " · ".join(f"{e.length_scale:.0f} chars: shared {e.shared:.3f} vs AlpacaEval-style {e.alpacaeval:.3f}"
                       for e in variant_errors)
    mo.vstack([mo.ui.altair_chart(cl.variant_chart(variant_errors), chart_selection=False, legend_selection=False),
               mo.md(f"RMSE from the length-free win rate (simulated): {_rows}.")])
    return (variant_errors,)


@app.cell
def _(mo):
    mo.md(r"""
    ## "Think again" without evidence: intrinsic self-correction

    Huang et al. (ICLR 2024) asked models to review and improve their own answers with no
    oracle and a fixed prompt. Accuracy went *down*: GPT-3.5 on GSM8K left 74.7% of its
    answers unchanged, and among the ones it changed, turned right into wrong more often
    than wrong into right. Earlier "self-correction gains" had stopped the loop when the
    answer was correct — using the very ground truth the loop is not supposed to have.

    That stopping rule alone manufactures progress. A **random re-answerer** (simulated:
    right 30% of the time, knowing nothing) "improves" every round under oracle stopping:
    """)
    return


@app.cell
def _(cj, mo, pairs, sc):
    rand_run = sc.run_intrinsic(pairs.make_questions(300, seed=2), sc.RandomReanswerer(p_correct=0.3), rounds=2)
    mo.hstack([
        mo.ui.altair_chart(cj.stopping_chart(sc.accuracy(rand_run), sc.oracle_stopping(rand_run),
                                             "Random re-answerer (simulated)"),
                           chart_selection=False, legend_selection=False),
        mo.ui.altair_chart(cj.transitions_chart(sc.transitions(rand_run), "Its transitions (simulated)"),
                           chart_selection=False, legend_selection=False),
    ])
    return (rand_run,)


@app.cell
def _(mo):
    sc_n = mo.ui.slider(2, 40, 1, value=3, label="questions", show_value=True)
    sc_go = mo.ui.run_button(label="run self-correction on the model")
    mo.hstack([sc_n, sc_go], justify="start")
    return sc_go, sc_n


@app.cell
def _(cache, mo, model_pick, pairs, sc, sc_go, sc_n, with_fallback):
    _qs = pairs.make_questions(sc_n.value, seed=3)

    def _loop(answerer):
        with mo.status.progress_bar(total=len(_qs), title=f"{answerer.name}: answer, review, revise ×2",
                                    remove_on_exit=True) as _bar:
            return sc.run_intrinsic(_qs, answerer, rounds=2, progress=lambda _k: _bar.update())

    if sc_go.value:
        lab_run, _used, sc_why = with_fallback(
            _loop, sc.ModelAnswerer(model_pick.value, max_tokens=192, cache=cache, options={"timeout": 300}), sc.RandomReanswerer(0.3, seed=3, name="sim/fallback-reanswerer"))
    else:
        lab_run, sc_why = None, None
    return lab_run, sc_why


@app.cell
def _(cj, frame_html, lab_run, mo, rand_run, sc, sc_why):
    import polars as _pl

    # the published numbers as a table beside the chart: accuracy (%) per self-correction round
    _huang = _pl.DataFrame(
        [{"model": p.model, "benchmark": p.benchmark, "round": f"round {p.round}", "accuracy": p.accuracy}
         for p in sc.load_huang()]
    ).pivot(on="round", index=["model", "benchmark"], values="accuracy")
    _lab = {cj.who(rand_run.answerer, True): sc.accuracy(rand_run)}
    if lab_run is not None:
        _lab[cj.who(lab_run.answerer, lab_run.simulated)] = sc.accuracy(lab_run)
    _parts = [mo.ui.altair_chart(cj.accuracy_chart(sc.load_huang(), _lab), chart_selection=False,
                                 legend_selection=False),
              mo.vstack([mo.md("**Huang et al. (2024)**, accuracy %"), mo.Html(frame_html(_huang, 1))])]
    if lab_run is not None:
        _parts.append(mo.ui.altair_chart(cj.transitions_chart(sc.transitions(lab_run), cj.who(
            lab_run.answerer, lab_run.simulated)), chart_selection=False, legend_selection=False))
    _warn = mo.callout(mo.md(f"**{sc_why}** — fell back to the random re-answerer."), kind="warn")
    _hint = mo.md("_Press the button to add the model's own run._") if lab_run is None else mo.md("")
    mo.vstack([_warn if sc_why else _hint, mo.hstack(_parts)])
    return


@app.cell
def _(lab_run, mo):
    mo.stop(lab_run is None)
    mo.ui.table([{"question": a.question_id, "round": a.round, "correct": a.correct, "answer": a.value,
                  "review": a.review[:120], "text": a.text[:160]} for row in lab_run.attempts for a in row],
                selection=None)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    On a verifiable task the judge — the model's own or another's — must never be the only
    oracle. What changes the information state is external evidence: a failing test, a
    compiler message, a computed answer. Here we computed the answers; the loop never saw them.
    """)
    return


@app.cell(hide_code=True)
def _(mo):
    from labkit.views.glossary import glossary_html

    mo.Html(glossary_html(["scoring_rules", "beta", "letter_mass", "stop_reasons"]))
    return


if __name__ == "__main__":
    app.run()

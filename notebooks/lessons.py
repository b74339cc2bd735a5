import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium", app_title="Five lessons the loop teaches by running")


@app.cell
def _():
    import marimo as mo

    return (mo,)


@app.cell
def _(mo):
    mo.md(r"""
    # Five lessons, each a run

    Seeds 000 and 002 end with lessons that are easy to nod at and easy to forget. Here each one
    is a short run on case material: the engine, the validator, the budget and the ledger are
    the real ones; where a tool, an outbox or a reflector is **simulated or scripted**, the
    section says so. Every number below is read from what the run recorded and asserted in
    `tests/test_lessons.py`.
    """)
    return


@app.cell
def _():
    from labkit.experiments.lessons import bound_reflection, coverage, effects, metrics, test_change
    from labkit.grading.verdicts import Checker
    from labkit.views import lessons as views
    from labkit.views.tables import frame_html

    checker = Checker()  # one verdict cache: each distinct candidate runs pytest once
    return bound_reflection, checker, coverage, effects, frame_html, metrics, test_change, views


@app.cell
def _(mo):
    mo.md(r"""
    ## 1 · The coverage counterfactual

    *"If the same-user hit test had never been written, the loop would quietly accept 'disable
    the cache'."* The engine runs twice from v1 of the cache case with one scripted proposal,
    **disable the cache**: once on the protected acceptance as written, once with the
    protective same-user hit tests removed. The full acceptance scores the result afterwards,
    as a hidden suite the loop never sees.
    """)
    return


@app.cell
def _(checker, coverage, frame_html, mo, views):
    arms = coverage.counterfactual(checker)
    mo.vstack([
        mo.Html(frame_html(views.coverage_frame(arms))),
        mo.md("Same proposal, same engine, same validator: only the acceptance differs. "
              "**Reflection quality is capped by acceptance coverage.**"),
    ])
    return


@app.cell
def _(mo):
    mo.md(r"""
    ## 2 · Changing a test legitimately

    Case `data/free_shipping`: the ticket said "free shipping over 50", and its author wrote a
    protected test that an order of exactly 50 still pays. The pricing policy (REQ-7, signed
    off by the product owner) says **50 or more** ships free. The engine, offered both fixes,
    keeps the one the wrong test wants. A protected test may change only on a requirement
    record the candidates' author did not write, through its own recorded event, and every
    candidate scored under the old test is re-validated.
    """)
    return


@app.cell
def _(checker, test_change):
    walk = test_change.walkthrough(checker)
    return (walk,)


@app.cell
def _(mo, walk):
    _ev = walk.accepted()
    _refused = "\n".join(f"- evidence **{o}** → refused: {why.split('refused: ')[-1]}" for o, why in walk.refusals)
    mo.md(f"""
    Before the change the engine keeps **{walk.kept(walk.before)}**.

    {_refused}
    - evidence **REQ-7** by *{walk.outcome.requirement.author}* → accepted, event #{_ev.seq}:
      test `{_ev.detail["old_test"]}` → `{_ev.detail["new_test"]}`, suite `{_ev.detail["old_suite"]}` →
      `{_ev.detail["new_suite"]}`.

    After the change the engine keeps **{walk.kept(walk.after)}**.
    """)
    return


@app.cell
def _(frame_html, mo, views, walk):
    mo.vstack([mo.md("Every candidate scored under the old test, re-validated:"),
               mo.Html(frame_html(views.revalidation_frame(walk)))])
    return


@app.cell
def _(mo):
    mo.md(r"""
    ## 3 · Observation-bound reflection

    Seed 002 §2: the same model may read a permission refusal as a badly written command and
    keep changing the command. The tool here is a **simulated** shell in which policy denies
    writes under `/srv/deploy`; both reflectors are **scripted**. The unbound one answers the
    message's words; the bound one must cite the action number, the error class the control
    plane recorded, the artifact and the explanations not yet ruled out — and POLICY_DENIED
    grants only an authorisation change or stop.
    """)
    return


@app.cell
def _(bound_reflection, frame_html, mo, views):
    from labkit.record.ledger import Ledger

    tool_ledger = Ledger()
    unbound, bound = bound_reflection.compare(tool_ledger)
    _cmds = "\n".join(f"{o.action}. `{o.command}` → {o.error_class}" for o in unbound.history)
    mo.vstack([
        mo.Html(frame_html(views.tool_frame([unbound, bound]))),
        mo.md(f"The unbound reflector's commands, budget {bound_reflection.BUDGET:g} units:\n\n{_cmds}"),
    ])
    return bound, tool_ledger


@app.cell
def _(bound, mo, tool_ledger):
    _r = next(e.detail for e in tool_ledger.events(bound.run_id) if e.kind == "reflect")
    mo.md(f"""
    The bound reflection, as recorded in the ledger: **observation** — action {_r["action"]},
    classified **{_r["error_class"]}**, artifact `{_r["artifact"]}`; **contributing hypothesis** —
    {_r["hypothesis"]} (not yet ruled out: {"; ".join(_r["open"])}); **next trial** —
    {_r["next_trial"]}. Outcome: **{bound.outcome}** after {bound.actions} action.
    """)
    return


@app.cell
def _(mo):
    mo.md(r"""
    ## 4 · Side effects a rollback cannot undo

    The cache fix comes with a notice to customers. The outbox is a **local in-process stub**
    (simulated) that delivers and then loses the first acknowledgement: UNKNOWN_EFFECT. The
    gate plans in dry run, sends under an idempotency key, refuses to repeat before
    reconciling, and checkpoints record code version, dependency image, environment, pending
    external actions and event position.
    """)
    return


@app.cell
def _(effects, frame_html, mo, views):
    gated, naive = effects.gated(), effects.naive()
    mo.vstack([
        mo.Html(frame_html(views.effect_frame(gated))),
        mo.Html(frame_html(views.checkpoint_frame(gated))),
        mo.md(f"""
    After the rollback the code is `{gated.code_after_rollback}` again, but the budget re-read from
    the ledger still says **{gated.spent_after_rollback:g}** units spent (it was
    {gated.spent_before_rollback:g} before) and the outbox still holds **{gated.delivered}** notice.
    A naive retry with a fresh key instead: **{naive.delivered}** deliveries, **{naive.duplicates}**
    duplicate found by the audit.
    """),
    ])
    return (gated,)


@app.cell
def _(effects, gated, mo, views):
    _steps = effects.effect_steps(gated.ledger, gated.run_id)
    mo.vstack([mo.md("### The gated run, event by event (from its ledger)"),
               mo.ui.anywidget(views.effect_browser(_steps))])
    return


@app.cell
def _(mo):
    mo.md(r"""
    ## 5 · Layer metrics

    Seed 002 §6's metrics for in-task evolution, read from one ledger holding the real frontier
    search on `api_change` at three budgets, a fourth search task whose environment check
    failed (**invalid_environment**, kept in the denominator), the deploy task three ways and
    the notice two ways. All branches of a search are one unit.
    """)
    return


@app.cell
def _(checker, frame_html, metrics, mo, views):
    lm = metrics.portfolio(checker).metrics
    mo.vstack([mo.Html(frame_html(views.metrics_frame(lm))),
               mo.Html(frame_html(views.units_frame(lm))),
               mo.md("A unit is a **trusted** completion when it ended in success, was confirmed on a sealed "
                     "set where it had one, and duplicated no side effect: the naive notice 'succeeded' and "
                     "is not trusted. Candidates are search branches and tool commands tried; a notice is an "
                     "action, not a candidate. Cost counts every unit, failures included.")])
    return


if __name__ == "__main__":
    app.run()

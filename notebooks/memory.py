import marimo

__generated_with = "0.25.2"
app = marimo.App(
    width="medium",
    app_title="Memory across tasks: what to keep, and when not to use it",
)


@app.cell
def _():
    import marimo as mo

    return (mo,)


@app.cell
def _(mo):
    mo.md(r"""
    # Memory across tasks: what to keep, and when not to use it

    A reflection loop can carry what it learned into the next trial (Reflexion's episodic
    buffer) and into the next task (conditioned experience, verified skills, replayed
    examples). Each kind of memory helps only under a condition, and each has a failure mode.
    Every number below comes from a run; **simulated** parts (the actor, the critic, the task
    mixes) are labelled, and the patches, validators and caches they act on are real.
    """)
    return


@app.cell
def _():
    from labkit.experiments.memory import counterexample, reflexion, replay, skills
    from labkit.grading.verdicts import Checker
    from labkit.views.memory_pages import counterexample_md, reflexion_pages, retrieval_md
    from labkit.views.stepper import Stepper

    return (
        Checker,
        Stepper,
        counterexample,
        counterexample_md,
        reflexion,
        reflexion_pages,
        replay,
        retrieval_md,
        skills,
    )


@app.cell
def _(mo):
    mo.md(r"""
    ## 1. Reflexion: a buffer of verbal reflections, trial by trial

    **Simulated actor** (it picks among each case's real patches); real visible tests decide
    keep or roll back, hidden tests score. After a rolled-back trial the wrapper writes a short
    reflection — action, error class, artifact, what is not yet ruled out — and prepends the
    buffer to the next trial. Step through one case:
    """)
    return


@app.cell
def _(Checker, reflexion):
    cases = reflexion.cases()[:3]
    frame, strategy = reflexion.run_arm(reflexion.ARMS[1], cases, Checker(), trials=4, seed=2)
    return cases, frame, strategy


@app.cell
def _(Stepper, cases, frame, mo, reflexion_pages, strategy):
    _labels, _pages = reflexion_pages(strategy, frame, cases[0].id)
    trial_step = mo.ui.anywidget(Stepper(len(_pages), _labels, unit="trial", pages=_pages))
    mo.vstack([mo.md(f"**Case `{cases[0].id}`** — {cases[0].title}"), trial_step])
    return


@app.cell
def _(mo):
    mo.md(r"""
    ## 2. A conditioned lesson, and the counterexample run for real

    The lesson "multi-tenant cache keys must cover the tenant boundary" is written to the store
    only from a kept, validated change in a real cache-isolation run. Applied where its
    condition fails — a public catalogue, one price for everyone — adding `user_id` to the key
    changes nothing about correctness and a lot about the cache:
    """)
    return


@app.cell
def _(counterexample):
    ce_run = counterexample.run(counterexample.Mix(users=100, products=200, requests=10_000, seeds=(0, 1, 2, 3)))
    return (ce_run,)


@app.cell
def _(ce_run, counterexample_md, mo, retrieval_md):
    mo.md(
        counterexample_md(ce_run)
        + "\n\n"
        + retrieval_md("Retrieval for the public-catalogue task (preconditions re-checked)", ce_run.catalogue)
    )
    return


@app.cell
def _(mo):
    mo.md(r"""
    ## 3. A verified skill library with progressive disclosure

    **Synthetic skills**, each checked by a real oracle (its code run in a separate process
    against an independent reference) before it may be stored. L1 is one metadata line per
    skill, always in the prompt; L2 the full text of the top retrieved skills; L3 one bundled
    file on demand. What grows with the library is L1:
    """)
    return


@app.cell
def _(mo, skills):
    mo.ui.table(skills.measure(), selection=None)
    return


@app.cell
def _(mo):
    mo.md(r"""
    ## 4. Raw transcript vs distilled lesson; replay and hindsight (simulated)

    A raw transcript carries its rejected actions into the next task; the distilled lesson
    comes back only where its preconditions hold. A replayed example helps only when the
    retrieval is right; hindsight relabelling turns failed trajectories into examples.
    """)
    return


@app.cell
def _(ce_run, mo, replay):
    from labkit.experiments.cache_isolation import case

    _p = replay.pollution(ce_run.store, case().environment)
    _rows = [
        {"arm": a, "success": round(_p.success[a].estimate, 3),
         "95% CI": f"{_p.success[a].low:.3f}–{_p.success[a].high:.3f}",
         "acted on a rolled-back action": round(_p.rejected_copied[a].estimate, 3)}
        for a in _p.success
    ]
    _her = replay.hindsight()
    mo.vstack([
        mo.md("**Next-task success (simulated actor, p_copy = 0.6, p_own = 0.6)**"),
        mo.ui.table(_rows, selection=None),
        mo.md("**Experience-following: success vs retrieval quality**"),
        mo.ui.table(replay.experience_following(), selection=None),
        mo.md("**Hindsight relabelling** — " + "; ".join(
            f"{k}: {v.estimate:.3f} ({v.low:.3f}–{v.high:.3f})" for k, v in _her.items())),
    ])
    return


if __name__ == "__main__":
    app.run()

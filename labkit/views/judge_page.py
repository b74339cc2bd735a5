"""The judge-bias worked example's text, controls, runs and steppers, built once for both notebooks.

`notebooks/judge_bias.py` (marimo) and `notebooks/judge_bias.ipynb` (JupyterLab) call these
functions and differ only in how they display the result (and marimo's progress bars, passed
in as `progress`). The numbers come from `labkit.experiments.judging`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any

import polars as pl

from labkit.core.paths import DATA
from labkit.experiments.judging import bias, pair_files, pairs, questions, sim_report
from labkit.experiments.judging import selfcorrect as sc
from labkit.experiments.judging.judge import (
    LETTER,
    Judge,
    ModelJudge,
    Swap,
    find_flip,
    judge_both,
    with_fallback,
)
from labkit.experiments.judging.leaderboard import Leaderboard, LengthAnalysis
from labkit.experiments.judging.sim_report import OPENING, SimSetting
from labkit.experiments.judging.simjudge import SimulatedJudge, VariantError, simulated_own
from labkit.views import charts_judge as cj
from labkit.views.controls import Slider
from labkit.views.glossary import link_first_uses
from labkit.views.stepper import Stepper
from labkit.views.tables import bounded

__all__ = [
    "AE_METHODS", "BIAS", "CLOSING", "INTRINSIC", "INTRO", "LENGTH", "REAL", "REAL_N", "RECORDED_LEAD",
    "RECORDED_MODEL", "RECORDED_NOTE", "SC_N", "SIM", "VARIANT_RECORDED",
    "ae_intro_md", "ae_lesson_md", "attempt_rows", "calibration_md", "huang_frame", "lab_accuracies",
    "lead_pair", "model_judge", "model_options", "pair_stepper", "real_battery", "real_md", "record_lead",
    "recorded_lead", "self_correction", "simulate", "variant_md",
]  # fmt: skip

# `progress(title, total)` -> a context manager whose value has `.update()` (marimo's progress bar)
Progress = Callable[[str, int], Any]

INTRO = """# Judges are biased; asking again is not evidence

An LLM judge compares two answers and says which is better. Show it the same two
answers in the other order and it may change its mind. Below, one pair of answers to
an arithmetic question — one right, one wrong — is judged twice, with the answers
swapped, by a real model running on this machine (choose another one if you like)."""

_BIAS = """A small model asked for a single letter says **"A"** whatever A is: a pure position
bias. Bigger judges do it less, but measurably ("swapping the order moves pairwise
accuracy by more than 10%"). The usual fixes are to **judge both orders** and combine
the two verdicts by a scoring rule (FastChat, LLMBar or JudgeBench: the chart below scores
each judge all three ways), and to **control for length**, because judges also like long
answers and their own answers.

Careful, though: *inconsistency alone is not position bias*. A judge that is merely
unsure about a close pair flips in both directions equally. Position bias is the
**asymmetry**: "first slot both times" more often than "second slot both times".

## A judge whose biases you set

The simulated judge picks slot A with probability
σ(k·Δquality + β + φ·Δlength + δ·own). Move the sliders; the metrics below are computed
from its verdicts on the project's pairs (right vs wrong answers, concise vs padded,
writers of different lengths, its "own" answers), every figure with a bootstrap interval.
(At the opening settings the metrics are read from a recording of this same computation,
`sim_report.record_sim_report()`, which the tests recompute; any move computes them afresh.)"""
BIAS = link_first_uses([_BIAS], ["scoring_rules"])[0]  # the scoring rules' first use opens the glossary

SIM = {
    "k": Slider(0.0, 6.0, OPENING.k, 0.5, "skill k"),
    "beta": Slider(-2.0, 2.0, OPENING.beta, 0.1, "position β"),
    "phi": Slider(-2.0, 2.0, OPENING.phi, 0.1, "length φ"),
    "delta": Slider(-2.0, 2.0, OPENING.delta, 0.1, "self δ"),
    "n_questions": Slider(20, 400, OPENING.n_questions, 20, "questions"),
}

LENGTH = """Length control (in the manner of AlpacaEval 2) fits
logit P(writer preferred) = θ_writer + φ·tanh(standardised length difference) and reads
the win rate with the length term set to zero. The padded and terse writers are exactly
as accurate as the baseline: with φ > 0 their raw win rates drift apart, the
length-controlled ones come back towards each other.

Step through the judged pairs (right vs wrong answers) one at a time:"""

REAL = """## The same battery on a real model

Each question gives 6 pairs (right/wrong, concise/padded, padded-wrong, three writers),
plus self-preference pairs where the model's own first answer was correct. Each pair is
judged in both orders; calls are cached on disk (`build/model_cache.sqlite`), so a second run
costs nothing."""
REAL_N = Slider(1, 30, 2, 1, "questions")

AE_METHODS = """### Two ways to control for length

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
assumption holds*, not which is right for GPT-4 Turbo."""

INTRINSIC = """## "Think again" without evidence: intrinsic self-correction

Huang et al. (ICLR 2024) asked models to review and improve their own answers with no
oracle and a fixed prompt. Accuracy went *down*: GPT-3.5 on GSM8K left 74.7% of its
answers unchanged, and among the ones it changed, turned right into wrong more often
than wrong into right. Earlier "self-correction gains" had stopped the loop when the
answer was correct — using the very ground truth the loop is not supposed to have.

That stopping rule alone manufactures progress. A **random re-answerer** (simulated:
right 30% of the time, knowing nothing) "improves" every round under oracle stopping. (Its engine
run on 300 questions was recorded once, `random_run.record_random_run()`; the tests run it again and
check every answer.)"""
SC_N = Slider(2, 40, 3, 1, "questions")

VARIANT_RECORDED = """_Stored result of `simulator_check()` (seeded; the tests recompute it every run and check it
matches), so the page opens without a minute of fits. Recompute it here:_"""

CLOSING = """On a verifiable task the judge — the model's own or another's — must never be the only
oracle. What changes the information state is external evidence: a failing test, a
compiler message, a computed answer. Here we computed the answers; the loop never saw them."""


def model_options() -> tuple[list[str], str]:
    """Models that can judge (the replay/scripted providers have no judge script), and the default."""
    from labkit.models.choice import model_choices
    from labkit.models.gateway import is_simulated

    options, default = model_choices()
    options = [m for m in options if not is_simulated(m)] or [default]
    return options, default if default in options else options[0]


def model_judge(model: str, cache: Any) -> ModelJudge:
    """`model` as a letter judge read from answer-token log-probabilities, calls cached on disk."""
    return ModelJudge(model=model, template=LETTER, use_logprobs=True, cache=cache, options={"timeout": 300})


# The lead pair as SmolLM2 judged it, recorded once (`record_lead()`) and replayed when the page
# opens, so opening calls no model; the live call is behind a button.
RECORDED_LEAD = DATA / "transcripts" / "judge_lead_smollm2.jsonl"
RECORDED_MODEL = "labkit/smollm2"
RECORDED_NOTE = (
    "**Recorded:** {model} judged these pairs on a laptop CPU when labkit was built; its replies "
    "(with their answer-token log-probabilities) are replayed here, so the page opens without "
    "running a model. Press **ask the model now** to judge the pair live with the model chosen above."
)


def recorded_lead() -> tuple[Swap | None, list[Swap]]:
    """The lead pair(s) exactly as RECORDED_MODEL judged them, replayed from RECORDED_LEAD (no model runs)."""
    judge = model_judge(f"labkit/replay:{RECORDED_LEAD}", None)
    lead, seen = find_flip(judge, pair_files.load_pairs(pairs.DATA_DIR / "correctness.jsonl"), limit=4)
    # what the model said, replayed: named as that model's recorded run (not a made-up judge)
    name = f"{RECORDED_MODEL} (recorded run, replayed)"

    def named(s: Swap) -> Swap:
        return replace(
            s,
            first=replace(s.first, judge=name, simulated=False),
            second=replace(s.second, judge=name, simulated=False),
        )

    shown = [named(s) for s in seen]
    return (shown[-1] if lead is not None else None), shown


def record_lead(path: Path = RECORDED_LEAD, model: str = RECORDED_MODEL) -> tuple[Swap | None, list[Swap]]:
    """Run the lead pair live on `model` (no cache) and write its replies to `path` (replaced)."""
    from labkit.models.replay import recording

    out = Path(path)
    out.unlink(missing_ok=True)
    with recording(out):
        judge, lead, seen, why = lead_pair(model, None)
    if why:
        out.unlink(missing_ok=True)
        raise RuntimeError(f"{model} could not judge, nothing recorded: {why}")
    return lead, seen


def lead_pair(model: str, cache: Any) -> tuple[ModelJudge, Swap | None, list[Swap], str | None]:
    """The model judges right-vs-wrong pairs in both orders until one flips (at most 4); if it
    cannot be used, the simulated judge (β = 1.5) does. (judge, flipped pair, all seen, why fell back)."""
    judge = model_judge(model, cache)
    lead_pairs = pair_files.load_pairs(pairs.DATA_DIR / "correctness.jsonl")

    def flip(j: Judge) -> tuple[Swap | None, list[Swap]]:
        return find_flip(j, lead_pairs, limit=4)

    (lead, seen), _, why = with_fallback(flip, judge, SimulatedJudge(k=2.0, beta=1.5))  # type: ignore[arg-type]
    return judge, lead, seen, why


@functools.lru_cache(maxsize=64)
def simulate(
    k: float, beta: float, phi: float, delta: float, n: int, seed: int = 0
) -> tuple[list[Swap], bias.BiasReport]:
    """The simulated judge with these biases on the battery of `n` questions, and its report (at the
    opening sliders, the recorded report: `labkit.experiments.judging.sim_report`)."""
    return sim_report.simulate(SimSetting(k=k, beta=beta, phi=phi, delta=delta, n_questions=n, seed=seed))


def calibration_md(sim: bias.BiasReport, k: float, beta: float, phi: float, delta: float) -> str:
    f, pos = sim.fit, sim.position
    where = f"{pos.gold_first} when it is A, {pos.gold_second} when it is B" if pos else "n/a"

    def shown(iv: Any) -> str:
        return "not identifiable here" if iv is None or f is None else bounded(iv, separated=f.separated)

    return link_first_uses(
        [
            f"""**Calibration.** Fitting the judge's own model back to its verdicts recovers what the
sliders set (95% intervals, resampling pairs):

| parameter | set | recovered |
|---|---|---|
| skill k | {k:.1f} | {shown(f.k if f else None)} |
| position β | {beta:.1f} | {shown(f.beta if f else None)} |
| length φ | {phi:.1f} | {shown(f.phi if f else None)} |
| self δ | {delta:.1f} | {shown(f.delta if f else None)} |

Set β = 0 and lower k: consistency drops on close pairs, yet "first" and "second" stay
level and β̂ covers 0. With β > 0, accuracy depends on where the right answer is shown:
{where}."""
        ],
        ["beta"],
    )[0]  # β̂'s first use on the page links to its entry


def pair_stepper(swaps: Sequence[Swap]) -> tuple[list[Swap], Stepper]:
    """The right-vs-wrong pairs and a stepper over their prepared cards (no kernel per step)."""
    shown = [s for s in swaps if s.pair.kind == "correctness"]
    return shown, Stepper(len(shown), [s.pair.id for s in shown], unit="pair", pages=[cj.swap_html(s) for s in shown])


def _bar(progress: Progress | None, title: str, total: int) -> Any:
    return progress(title, total) if progress else nullcontext(None)


def real_battery(
    judge: ModelJudge, cache: Any, n: int, fallback: SimulatedJudge, progress: Progress | None = None
) -> tuple[list[Swap], str | None]:
    """The battery of `n` questions judged by the model in both orders (the fallback judge if the
    model cannot be used); self-preference pairs use the model's own answers. (swaps, why fell back)."""
    qs = questions.make_questions(n, seed=1)

    def battery(j: ModelJudge | SimulatedJudge) -> list[Swap]:
        answerer = (
            sc.ModelAnswerer(model=j.name, max_tokens=128, cache=cache, options={"timeout": 300})
            if isinstance(j, ModelJudge)
            else None
        )
        own = sc.own_answers(answerer, qs) if answerer else simulated_own(qs)
        ps = pairs.battery(qs, 1, own, j.name)
        with _bar(progress, f"{j.name}: {len(ps)} pairs × 2 orders", len(ps)) as bar:
            return judge_both(j, ps, progress=(lambda _k: bar.update()) if bar else None)

    swaps, _, why = with_fallback(battery, judge, fallback)  # type: ignore[arg-type]
    return swaps, why


def real_md(real: bias.BiasReport, swaps: Sequence[Swap]) -> str:
    own = (
        "no correct own answers, so self-preference cannot be measured for this model"
        if real.self_preference is None
        else f"self-preference share {real.self_preference.share}"
    )
    beta = bounded(real.fit.beta, separated=real.fit.separated) if real.fit and real.fit.beta else "n/a"
    return (
        f"{cj.who(real.judge, real.simulated)}: {len(swaps)} pairs, "
        f"**{real.n_unparseable} replies gave no verdict** (counted, not dropped); {own}; "
        f"fitted position bias β̂ = {beta}."
    )


def ae_intro_md(ae: LengthAnalysis) -> str:
    p = ae.provenance
    return f"""## Real judge data: AlpacaEval 2

Everything above used a simulated judge or a small local one. Here is a real judge at work:
the **AlpacaEval 2 leaderboard** — {ae.n_models} models, each judged against the same baseline
(`{p.baseline}`, {p.baseline_known_as}) on {p.n_instructions} instructions by {p.judge}
(`{p.judge_model}`, AlpacaEval's `{p.annotator}` configuration). The file ships in the
**`{p.package}` {p.version}** package (`{p.file}`); labkit reads it, nothing is fetched,
and every figure below is computed here from that file.

Each point is a model: its average output length against its win rate — raw, and
length-controlled (LC: AlpacaEval's logistic fit read with the length term at zero)."""


def ae_lesson_md(ae: LengthAnalysis, board: Leaderboard) -> str:
    n, base = ae.null_model, board.entry(ae.provenance.baseline)
    top = " — above every real model" if n.lc_rank == 1 else ""
    return f"""**Length explains a lot of the raw ranking** (r = {ae.raw.r}) and still a fair part of the
length-controlled one (r = {ae.lc.r}): length control weakens the verbosity effect, it does
not remove it. Models that pad move down under LC; terse ones (the `_concise` runs) move up.

**And then there is `{n.name}`.** It is not a model: it returns *one constant reply*,
written to steer the judge, whatever the instruction. Raw win rate {n.raw:.1%} (rank
{n.raw_rank} of {ae.n_models}); length-controlled **{n.lc:.1%}, rank {n.lc_rank}**{top}.
Its reply is {n.avg_length} characters against the baseline's {base.avg_length}, and length
control, which credits the shorter answer, {"*raised*" if n.lc > n.raw else "lowered"} it.

The lesson: a judge can be gamed, and a correction for one bias can amplify an exploit.
Flooding an LLM judge is a reward hack. On a verifiable task a judge must never be the
only oracle — check the answer, run the test."""


def variant_md(errors: Sequence[VariantError]) -> str:
    rows = " · ".join(
        f"{e.length_scale:.0f} chars: shared {e.shared:.3f} vs AlpacaEval-style {e.alpacaeval:.3f}" for e in errors
    )
    return f"RMSE from the length-free win rate (simulated): {rows}."


def self_correction(
    model: str, cache: Any, n: int, progress: Progress | None = None
) -> tuple[sc.SelfCorrectionRun, str | None]:
    """The model answers, reviews and revises twice on `n` questions (the random re-answerer if it
    cannot be used). (run, why fell back)."""
    qs = questions.make_questions(n, seed=3)

    def loop(answerer: Any) -> sc.SelfCorrectionRun:
        with _bar(progress, f"{answerer.name}: answer, review, revise ×2", len(qs) * 3) as bar:  # 3 answers each
            return sc.run_intrinsic(qs, answerer, rounds=2, progress=(lambda _k: bar.update()) if bar else None)

    run, _, why = with_fallback(
        loop,
        sc.ModelAnswerer(model=model, max_tokens=192, cache=cache, options={"timeout": 300}),
        sc.RandomReanswerer(0.3, seed=3, name="sim/fallback-reanswerer"),
    )
    return run, why


def huang_frame() -> pl.DataFrame:
    """The published numbers: accuracy (%) per self-correction round, one row per model and benchmark."""
    return pl.DataFrame(
        [
            {"model": p.model, "benchmark": p.benchmark, "round": f"round {p.round}", "accuracy": p.accuracy}
            for p in sc.load_huang()
        ]
    ).pivot(on="round", index=["model", "benchmark"], values="accuracy")


def lab_accuracies(rand_run: sc.SelfCorrectionRun, lab_run: sc.SelfCorrectionRun | None) -> dict[str, Any]:
    lab = {cj.who(rand_run.answerer, True): sc.accuracy(rand_run)}
    if lab_run is not None:
        lab[cj.who(lab_run.answerer, lab_run.simulated)] = sc.accuracy(lab_run)
    return lab


def attempt_rows(run: sc.SelfCorrectionRun) -> list[dict[str, object]]:
    return [
        {
            "question": a.question_id,
            "round": a.round,
            "correct": a.correct,
            "answer": a.value,
            "review": a.review[:120],
            "text": a.text[:160],
        }
        for row in run.attempts
        for a in row
    ]

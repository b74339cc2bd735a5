"""labkit's logistic fits against a reference library (statsmodels), on the same design matrices.

statsmodels is a dev requirement: if it is missing these tests fail on the import, they do not skip.
"""

import json
import warnings

import numpy as np
import pandas as pd
import patsy
import pytest
import statsmodels.api as sm
from recordings import assert_as_recorded

from labkit.experiments.judging import bias, lengthctl, logistic
from labkit.experiments.judging import pairs as P
from labkit.experiments.judging.judge import Judgment, Swap
from labkit.experiments.judging.pairs import Pair
from labkit.experiments.judging.simjudge import (
    RECORDED_CHECK,
    SimulatedJudge,
    recorded_simulator_check,
    simulator_check,
    synthetic_pairs,
)

TOL = 1e-6
_SLOT = {("12", 1): "A", ("12", 2): "B", ("21", 1): "B", ("21", 2): "A"}


def reference_logit(x, y):
    """statsmodels' maximum-likelihood logistic fit (fractional y: the score equations are the same)."""
    return sm.Logit(y, x).fit(method="newton", tol=1e-14, maxiter=200, disp=0).params


def tied_swaps(n, seed):
    """Random verdicts with ties (½), random lengths and qualities, some pairs the judge's own."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        q1, q2 = rng.random(2)
        p = 1 / (1 + np.exp(-(2.0 * (q1 - q2) + 0.4)))
        w12 = 0 if rng.random() < 0.15 else (1 if rng.random() < p else 2)
        w21 = 0 if rng.random() < 0.15 else (2 if rng.random() < 1 - p else 1)
        m1, m2 = [("j", "o"), ("o", "j"), ("o", "o")][i % 3]
        pair = Pair(
            id=f"p{i}",
            question="q",
            output_1="x" * int(rng.integers(50, 600)),
            output_2="y" * int(rng.integers(50, 600)),
            label=1 if q1 > q2 else 2,
            kind="k",
            model_1=m1,
            model_2=m2,
            quality_1=float(q1),
            quality_2=float(q2),
        )
        pick = {o: "tie" if w == 0 else _SLOT[(o, w)] for o, w in (("12", w12), ("21", w21))}
        out.append(
            Swap(
                pair,
                Judgment(pair_id=pair.id, order="12", pick=pick["12"], judge="j", simulated=False),
                Judgment(pair_id=pair.id, order="21", pick=pick["21"], judge="j", simulated=False),
            )
        )
    return bias.table(out)


@pytest.mark.parametrize(
    "make",
    [
        lambda: bias.table(
            SimulatedJudge(k=3.0, beta=0.5, phi=1.0, delta=0.4, seed=3).run(synthetic_pairs(800, seed=3, own_share=0.3))
        ),
        lambda: tied_swaps(500, seed=4),
    ],
    ids=["simulated", "with-ties"],
)
def test_fit_judge_agrees_with_statsmodels(make):
    t = make()
    d = bias.judge_design(t)
    assert d.columns == ("beta", "k", "phi", "delta")
    fit = bias.fit_judge(t, resamples=20)
    ours = np.array([fit.beta.estimate, fit.k.estimate, fit.phi.estimate, fit.delta.estimate])
    np.testing.assert_allclose(ours, reference_logit(d.x, d.y), rtol=0, atol=TOL)


def writer_table(seed=9, n=300, phi=1.5):
    wp = P.writer_pairs(P.make_questions(n, seed=seed), seed=seed)
    return bias.table(SimulatedJudge(k=3.0, beta=0.5, phi=phi, seed=seed).run(wp))


def test_length_controlled_agrees_with_statsmodels():
    t = writer_table()
    d = lengthctl.length_design(t, "writer/baseline")
    lc = bias.length_controlled(t, "writer/baseline", resamples=20)
    ref = reference_logit(d.x, d.y)
    assert lc.phi.estimate == pytest.approx(ref[-1], abs=TOL)
    np.testing.assert_allclose(
        [r.length_controlled.estimate for r in lc.rates], logistic.sigmoid(ref[:-1]), rtol=0, atol=TOL
    )
    assert [r.model for r in lc.rates] == list(d.columns[:-1])


def test_the_old_ridge_would_not_have_agreed():
    # the fits used to carry a fixed ridge of 1e-3: visible at this tolerance, so the check has teeth
    t = writer_table()
    d = lengthctl.length_design(t, "writer/baseline")
    ridged = logistic.fit_logistic(d.x, d.y, np.ones((1, d.y.size)), ridge=1e-3)[0]
    assert np.abs(ridged - reference_logit(d.x, d.y)).max() > TOL


def alpacaeval_minimal(v, baseline_len_first=True):
    """AlpacaEval's length_controlled_minimal GLM for each model, written the way alpaca_eval does it
    (metrics/glm_winrate.py: patsy formula, std of len_1 − len_2 with output_1 the baseline, preference
    in [0, 1], rows duplicated with y = 1 / 0 weighted by the preference), fitted without penalty."""
    formula = "np.tanh(std_delta_len) + not_gamed_baseline.astype(float) - 1"
    out = {}
    for i, name in enumerate(v.names):
        mine = v.model == i
        delta = -v.dlen[mine]  # len(baseline) − len(model)
        df = pd.DataFrame(
            {"std_delta_len": delta / pd.Series(delta).std(), "not_gamed_baseline": True, "preference": v.y[mine]}
        )
        x = patsy.dmatrix(formula, df, return_type="dataframe")
        dup = pd.concat([x, x], ignore_index=True)
        y = np.r_[np.ones(len(x)), np.zeros(len(x))]
        w = np.r_[df["preference"], 1 - df["preference"]]
        fit = sm.GLM(y, dup, family=sm.families.Binomial(), freq_weights=w).fit(tol=1e-14, maxiter=200)
        test = patsy.build_design_matrices([x.design_info], df.assign(std_delta_len=0.0), return_type="dataframe")[0]
        out[name] = (float(fit.predict(test).mean()), float(fit.params["np.tanh(std_delta_len)"]))
    return out


def test_per_model_option_reproduces_alpacaevals_minimal_formula_without_penalty():
    t = writer_table()
    lc = bias.length_controlled(t, "writer/baseline", resamples=20, variant="alpacaeval", l1=0)
    assert lc.variant == "alpacaeval" and lc.phi is None
    ref = alpacaeval_minimal(lengthctl.versus(t, "writer/baseline"))
    for r in lc.rates:
        win, phi = ref[r.model]
        assert r.length_controlled.estimate == pytest.approx(win, abs=TOL)
        assert r.phi.estimate == pytest.approx(-phi, abs=TOL)  # AlpacaEval's Δlen is baseline − model
        assert r.l1 == 0.0
    # ...and differs from the shared-φ fit
    shared = {
        r.model: r.length_controlled.estimate for r in bias.length_controlled(t, "writer/baseline", resamples=20).rates
    }
    assert max(abs(shared[r.model] - r.length_controlled.estimate) for r in lc.rates) > 0.005


@pytest.mark.parametrize("lam", [0.5, 5.0, 20.0, 80.0])
def test_l1_fit_agrees_with_statsmodels(lam):
    # statsmodels' L1 uses Logit's binary log-likelihood, so the reference case has binary outcomes
    rng = np.random.default_rng(0)
    n = 400
    x = np.stack([np.ones(n), np.tanh(rng.normal(size=n))], axis=1)
    y = (rng.random(n) < 1 / (1 + np.exp(-(0.2 + 0.9 * x[:, 1])))).astype(float)
    ours = logistic.fit_l1(x, y, np.ones((1, n)), lam)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = (
            sm.Logit(y, x)
            .fit_regularized(method="l1", alpha=lam, disp=0, acc=1e-14, trim_mode="off", maxiter=1000)
            .params
        )
    np.testing.assert_allclose(ours, ref, rtol=0, atol=TOL)
    # a strong penalty puts the model's term at exactly 0 (a win rate of exactly 50%), then φ too
    assert (ours[0] == 0.0) == (lam >= 20) and (ours[1] == 0.0) == (lam >= 80)


def test_l1_at_zero_is_the_maximum_likelihood_fit():
    t = writer_table()
    d = lengthctl.length_design(t, "writer/baseline")
    w = np.ones((1, d.y.size))
    np.testing.assert_allclose(logistic.fit_l1(d.x, d.y, w, 0.0), logistic.fit_logistic(d.x, d.y, w), atol=TOL)


def test_cross_validated_penalty_can_snap_a_model_to_exactly_fifty_percent():
    # "m" wins exactly half its pairs whatever the lengths; "s" wins 90%
    rng = np.random.default_rng(2)

    def sw(i, model, win):
        pair = Pair(
            id=f"{model}{i}",
            question="q",
            output_1="x" * int(rng.integers(50, 900)),
            output_2="y" * 300,
            label=0,
            kind="writer",
            model_1=model,
            model_2="base",
        )
        pick = "A" if win else "B"
        return Swap(
            pair,
            Judgment(pair_id=pair.id, order="12", pick=pick, judge="j", simulated=False),
            Judgment(pair_id=pair.id, order="21", pick="B" if win else "A", judge="j", simulated=False),
        )

    t = bias.table([sw(i, "m", i % 2 == 0) for i in range(200)] + [sw(i, "s", i % 10 != 0) for i in range(200)])
    lc = {r.model: r for r in bias.length_controlled(t, "base", resamples=50, variant="alpacaeval").rates}
    assert lc["m"].length_controlled.estimate == 0.5 and lc["m"].l1 == pytest.approx(1e4)
    # the strong model keeps a term, pulled toward 50% by the penalty; its φ (no length effect) is 0
    assert 0.5 < lc["s"].length_controlled.estimate < lc["s"].raw.estimate == 0.9 and lc["s"].l1 < 1e4
    assert lc["s"].phi.estimate == 0.0
    shared = {r.model: r for r in bias.length_controlled(t, "base", resamples=50).rates}
    assert shared["m"].length_controlled.estimate != 0.5


def test_variant_and_penalty_are_checked():
    t = writer_table(n=20)
    with pytest.raises(ValueError, match="unknown length-control variant"):
        bias.length_controlled(t, "writer/baseline", variant="per-model")
    with pytest.raises(ValueError, match="l1 must be"):
        bias.length_controlled(t, "writer/baseline", variant="alpacaeval", l1=-1.0)
    with pytest.raises(ValueError, match="at least 5 pairs"):
        lengthctl.choose_l1(np.ones((3, 2)), np.ones(3))


def test_on_the_simulator_the_shared_fit_lands_nearer_the_length_free_win_rate():
    # caveat: the simulated judge has one φ for all writers — the shared fit's own assumption
    # (the configuration the notebook shows: 5 seeds × 800 questions × 3 writers per length scale)
    errs = simulator_check()
    # the notebook shows the stored copy on open (data/judge/simulator_check.json): it is this run's
    recorded = recorded_simulator_check()
    assert [(e.length_scale, e.n_rates) for e in recorded] == [(e.length_scale, e.n_rates) for e in errs]
    assert_as_recorded(
        [x for e in errs for x in (e.shared, e.alpacaeval)],
        pytest.approx([x for e in recorded for x in (e.shared, e.alpacaeval)], rel=1e-6),
        json.loads(RECORDED_CHECK.read_text(encoding="utf-8")),
        "the simulator check (data/judge/simulator_check.json)",
    )
    assert [e.length_scale for e in errs] == [100.0, 200.0, 400.0]
    for e in errs:
        assert e.n_rates == 15
        assert e.shared < e.alpacaeval
        assert e.shared < 0.03

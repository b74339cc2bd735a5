"""Calibration: the simulated judge has known biases; the metrics must find them, within their
intervals, over several seeds, and must not invent a bias that is not there."""

import math

import numpy as np
import pytest

from labkit.experiments.judging import bias
from labkit.experiments.judging.pairs import Pair
from labkit.experiments.judging.simjudge import SimulatedJudge, synthetic_pairs

SEEDS = range(5)
RESAMPLES = 400


def sigmoid(z):
    return 1 / (1 + math.exp(-z))


def test_probability_follows_the_formula_in_both_orders():
    j = SimulatedJudge(k=2.0, beta=0.5, phi=1.0, delta=0.7, length_scale=100.0)
    p = Pair(
        id="x",
        question="q",
        output_1="a" * 300,
        output_2="b" * 100,
        label=1,
        model_1="sim/judge",
        model_2="other",
        quality_1=1.0,
        quality_2=0.4,
    )
    dl = math.tanh(200 / 100)
    assert j.p_first(p, "12") == pytest.approx(sigmoid(2.0 * 0.6 + 0.5 + 1.0 * dl + 0.7))
    assert j.p_first(p, "21") == pytest.approx(sigmoid(-2.0 * 0.6 + 0.5 - 1.0 * dl - 0.7))


def test_judgments_are_labelled_simulated_and_reproducible():
    j = SimulatedJudge(beta=1.0, seed=3)
    pairs = synthetic_pairs(50, seed=0)
    one_by_one = [(j.judge(p, "12").pick, j.judge(p, "21").pick) for p in pairs]
    batch = j.run(pairs)
    assert one_by_one == [(s.first.pick, s.second.pick) for s in batch]
    assert all(s.first.simulated and s.first.source == "simulated" for s in batch)
    assert "simulated" in j.judge(pairs[0], "12").raw
    assert SimulatedJudge(seed=4).run(pairs) != batch  # another seed, other draws


def test_needs_ground_truth_quality():
    with pytest.raises(ValueError, match="quality_1"):
        SimulatedJudge().judge(Pair(id="x", question="q", output_1="a", output_2="b"), "12")


def test_fit_recovers_all_four_parameters_within_intervals_over_seeds():
    # A 95% interval misses one time in twenty, so over 5 seeds we ask for coverage, not perfection:
    # at least 4 of 5 per parameter and 18 of the 20 checks overall.
    truth = {"k": 3.0, "beta": 0.6, "phi": 0.8, "delta": -0.5}
    hits = {name: 0 for name in truth}
    for seed in SEEDS:
        j = SimulatedJudge(seed=seed, **truth)
        t = bias.table(j.run(synthetic_pairs(1500, seed=seed, own_share=0.5)))
        fit = bias.fit_judge(t, length_scale=j.length_scale, resamples=RESAMPLES, seed=seed)
        assert fit.simulated
        for name, value in truth.items():
            iv = getattr(fit, name)
            hits[name] += iv.low <= value <= iv.high
            assert iv.high - iv.low < 0.6, (name, iv)  # informative, not a licence to pass
            assert abs(iv.estimate - value) < 0.4, (seed, name, iv)
    assert all(h >= 4 for h in hits.values()), hits
    assert sum(hits.values()) >= 18, hits


def _coverage(make_check):
    """Fraction of seeds where the truth lies in the 95% interval."""
    return np.mean([make_check(seed) for seed in SEEDS])


def test_position_rates_cover_their_expected_values():
    def check(seed):
        j = SimulatedJudge(k=3.0, beta=0.8, seed=seed)
        pairs = synthetic_pairs(800, seed=seed)
        report = bias.position(bias.table(j.run(pairs)), resamples=RESAMPLES, seed=seed)
        want = j.expected_position_rates(pairs)
        return all(getattr(report, m).low <= want[m] <= getattr(report, m).high for m in want)

    assert _coverage(check) >= 0.8


def test_no_position_bias_still_gives_imperfect_consistency_on_close_pairs():
    """β = 0: on close pairs the judge flips a lot, but equally often toward each slot."""
    for seed in SEEDS:
        j = SimulatedJudge(k=3.0, beta=0.0, seed=seed)
        t = bias.table(j.run(synthetic_pairs(1000, seed=seed, quality_gap=0.2)))
        r = bias.position(t, resamples=RESAMPLES, seed=seed)
        assert r.consistency.high < 0.7  # far from consistent...
        assert r.first.low > 0.15 and r.second.low > 0.15  # ...flipping both ways...
        assert r.net_position.low <= 0.0 <= r.net_position.high  # ...with no asymmetry
        fit = bias.fit_judge(t, resamples=RESAMPLES, seed=seed)
        assert fit.beta.low <= 0.0 <= fit.beta.high
    # while a real β shows up as asymmetry on the same close pairs
    biased = SimulatedJudge(k=3.0, beta=1.0, seed=0)
    r = bias.position(bias.table(biased.run(synthetic_pairs(1000, seed=0, quality_gap=0.2))), resamples=RESAMPLES)
    assert r.net_position.low > 0.3


def test_verbosity_share_matches_phi_and_is_half_without_it():
    def share(phi, seed):
        j = SimulatedJudge(k=3.0, phi=phi, beta=0.5, seed=seed)
        pairs = synthetic_pairs(1000, seed=seed, quality_gap=0.0)  # equal quality: only length differs
        r = bias.verbosity(bias.table(j.run(pairs)), resamples=RESAMPLES, seed=seed)
        p = np.array([j.p_first(p, "12") for p in pairs])
        q = np.array([j.p_first(p, "21") for p in pairs])
        longer1 = np.array([len(p.output_1) > len(p.output_2) for p in pairs])
        used = np.array([len(p.output_1) != len(p.output_2) for p in pairs])
        expected = np.where(longer1, (p + 1 - q) / 2, (1 - p + q) / 2)[used].mean()
        return r, expected

    for seed in SEEDS:
        r0, e0 = share(0.0, seed)
        assert r0.share.low <= 0.5 <= r0.share.high and e0 == pytest.approx(0.5, abs=1e-9)
    hits = [share(1.0, s) for s in SEEDS]
    assert all(r.share.low > 0.55 for r, _ in hits)
    assert np.mean([r.share.low <= e <= r.share.high for r, e in hits]) >= 0.8


def test_self_preference_share_tracks_delta():
    covered = 0
    for seed in SEEDS:
        pairs = synthetic_pairs(1200, seed=seed, quality_gap=0.0, length_gap=0, own_share=1.0)
        none = bias.self_preference(bias.table(SimulatedJudge(delta=0.0, seed=seed).run(pairs)), resamples=RESAMPLES)
        some = bias.self_preference(bias.table(SimulatedJudge(delta=0.8, seed=seed).run(pairs)), resamples=RESAMPLES)
        assert some.n_pairs == 1200
        assert none.share.high < some.share.low  # δ = 0.8 is always detected
        covered += none.share.low <= 0.5 <= none.share.high
        covered += some.share.low <= sigmoid(0.8) <= some.share.high  # the exact expected share
    assert covered >= 9  # of 10


def test_length_control_removes_a_pure_length_advantage():
    from labkit.experiments.judging import pairs as P

    qs = P.make_questions(500, seed=9)
    wp = P.writer_pairs(qs, seed=9)
    verbose = SimulatedJudge(k=3.0, beta=0.5, phi=1.5, seed=9)
    fair = SimulatedJudge(k=3.0, beta=0.5, phi=0.0, seed=9)
    lc = {
        r.model: r
        for r in bias.length_controlled(bias.table(verbose.run(wp)), "writer/baseline", resamples=RESAMPLES).rates
    }
    no_len = {
        r.model: r
        for r in bias.length_controlled(bias.table(fair.run(wp)), "writer/baseline", resamples=RESAMPLES).rates
    }
    # the length-biased judge inflates the padded writer's raw win rate over the fair judge's...
    assert lc["writer/padded"].raw.low > no_len["writer/padded"].raw.high
    # ...and length control brings it back inside the fair judge's interval
    fair_iv = no_len["writer/padded"].raw
    assert fair_iv.low <= lc["writer/padded"].length_controlled.estimate <= fair_iv.high
    # the terse writer is punished by length and restored the same way
    assert lc["writer/terse"].raw.high < no_len["writer/terse"].raw.low
    assert no_len["writer/terse"].raw.low <= lc["writer/terse"].length_controlled.estimate

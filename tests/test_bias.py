"""Metric formulas on small cases computed by hand, and the bootstrap against index resampling."""

import numpy as np
import pytest

from labkit.core.stats import bootstrap_mean
from labkit.experiments.judging import bias, logistic
from labkit.experiments.judging.judge import Judgment, Swap
from labkit.experiments.judging.pairs import Pair

_SLOT = {("12", 1): "A", ("12", 2): "B", ("21", 1): "B", ("21", 2): "A"}


def swap(pid, w12, w21, label=1, out1="x", out2="y", m1="", m2="", judge="j"):
    """A pair judged in both orders; w12 / w21 are the chosen outputs (0 tie, None unparseable)."""

    def pick(order, w):
        return None if w is None else ("tie" if w == 0 else _SLOT[(order, w)])

    pair = Pair(id=pid, question="q", output_1=out1, output_2=out2, label=label, kind="k", model_1=m1, model_2=m2)
    return Swap(
        pair,
        Judgment(pair_id=pid, order="12", pick=pick("12", w12), judge=judge, simulated=False),
        Judgment(pair_id=pid, order="21", pick=pick("21", w21), judge=judge, simulated=False),
    )


def test_position_metrics_by_hand():
    t = bias.table(
        [
            swap("p1", 1, 1),  # consistent, right
            swap("p2", 1, 2),  # slot A both times: biased to first
            swap("p3", 2, 1),  # slot B both times: biased to second
            swap("p4", 0, 1),  # tie, then output 1: inconsistent, "other"
            swap("p5", None, 1),  # unparseable: counted, left out
        ]
    )
    r = bias.position(t)
    assert (r.n_pairs, r.n_unparseable, r.n_scored) == (5, 1, 4)
    got = {name: iv.estimate for name, iv in r.rows()}
    assert got == pytest.approx(
        {
            "consistency": 1 / 4,
            "first": 1 / 4,
            "second": 1 / 4,
            "other": 1 / 4,
            "net_position": 0.0,
            "accuracy_12": 2 / 4,  # p1, p2 chose output 1 in order 12
            "accuracy_21": 3 / 4,  # p1, p3, p4 in order 21
            "accuracy_gap": -1 / 4,
            # gold is output 1 everywhere, so order 12 is the one showing it first
            "gold_first": 2 / 4,
            "gold_second": 3 / 4,
            "gold_shift": -1 / 4,
            "fastchat": 1 / 4,  # only p1 survives "inconsistent -> tie"
            "llmbar": (1 + 0.5 + 0.5 + 0.5) / 4,
            "judgebench": 2 / 4,  # p1, and p4 where the tie defers to the decisive order
        }
    )


def test_unparseable_counted_wrong_as_llmbar_scores():
    # LLMBar's evaluate.py: every pair stays in the denominator, a missing verdict is never correct,
    # and two missing verdicts are "equal" (it compares the raw winners, None == None)
    t = bias.table([swap("p1", 1, 1), swap("p2", None, 1), swap("p3", None, None), swap("p4", 2, 1)])
    out, wrong = bias.position(t), bias.position(t, unparseable="wrong")
    assert (out.n_scored, wrong.n_scored, out.n_unparseable, wrong.n_unparseable) == (2, 4, 2, 2)
    assert (out.accuracy_12.estimate, out.accuracy_21.estimate, out.consistency.estimate) == (0.5, 1.0, 0.5)
    assert (wrong.accuracy_12.estimate, wrong.accuracy_21.estimate) == (1 / 4, 3 / 4)
    assert wrong.consistency.estimate == 2 / 4  # p1, and p3's two missing verdicts
    assert wrong.llmbar.estimate == (1 / 4 + 3 / 4) / 2


def test_zero_resamples_gives_points_without_bounds():
    t = bias.table([swap("p1", 1, 1), swap("p2", 1, 2)])
    full, points = bias.position(t), bias.position(t, resamples=0)
    for (name, a), (_, b) in zip(full.rows(), points.rows(), strict=True):
        assert a.estimate == b.estimate, name
        assert np.isnan(b.low) and np.isnan(b.high), name


def test_gold_first_follows_where_the_better_output_is_shown():
    # a judge that always says "A": right whenever the gold output is shown first, never otherwise
    t = bias.table([swap("p1", 1, 2, label=1), swap("p2", 1, 2, label=2), swap("p3", 1, 2, label=2)])
    r = bias.position(t)
    assert (r.gold_first.estimate, r.gold_second.estimate, r.gold_shift.estimate) == (1.0, 0.0, 1.0)
    assert r.accuracy_12.estimate == pytest.approx(1 / 3) and r.accuracy_21.estimate == pytest.approx(2 / 3)
    assert r.llmbar.estimate == 0.5 and r.fastchat.estimate == 0.0


def test_position_accuracy_ignores_pairs_without_a_gold_winner():
    t = bias.table([swap("a", 1, 1, label=1), swap("b", 2, 2, label=0), swap("c", 2, 1, label=None)])
    r = bias.position(t)
    assert r.n_scored == 1 and r.accuracy_12.estimate == 1.0
    assert r.consistency.estimate == pytest.approx(2 / 3)


def test_degenerate_data_gives_a_degenerate_interval():
    r = bias.position(bias.table([swap(f"p{i}", 1, 1) for i in range(20)]))
    assert (r.consistency.low, r.consistency.estimate, r.consistency.high) == (1.0, 1.0, 1.0)


def test_multinomial_bootstrap_matches_index_resampling():
    rng = np.random.default_rng(5)
    w = rng.integers(1, 3, size=(300, 2))
    t = bias.table([swap(f"p{i}", int(a), int(b)) for i, (a, b) in enumerate(w)])
    ours = bias.position(t, resamples=4000, seed=1).consistency
    ref = bootstrap_mean((w[:, 0] == w[:, 1]).astype(float), resamples=4000, seed=1)
    assert ours.estimate == pytest.approx(ref.estimate)
    assert ours.low == pytest.approx(ref.low, abs=0.01) and ours.high == pytest.approx(ref.high, abs=0.01)


def test_verbosity_share_by_hand():
    long, short = "x" * 30, "y" * 10
    t = bias.table(
        [
            swap("p1", 1, 1, out1=long, out2=short),  # longer chosen both times: 1
            swap("p2", 1, 2, out1=short, out2=long),  # longer chosen in order 21 only: 1/2
            swap("p3", 0, 2, out1=long, out2=short),  # tie (1/2), then shorter (0): 1/4
            swap("p4", 1, 1, out1=short, out2=short),  # equal lengths: not counted
        ]
    )
    r = bias.verbosity(t)
    assert r.n_pairs == 3
    assert r.share.estimate == pytest.approx(1.75 / 3)
    # the longer output was shown first in p1's, p2's and p3's order 12, 21, 12 judgments
    assert r.shown_first.estimate == pytest.approx((1 + 1 + 0.5) / 3)
    assert r.shown_second.estimate == pytest.approx((1 + 0 + 0) / 3)


def test_self_preference_uses_the_judge_name():
    t = bias.table(
        [
            swap("p1", 1, 1, m1="j", m2="other"),  # own chosen twice
            swap("p2", 1, 2, m1="other", m2="j"),  # own chosen once
            swap("p3", 1, 1, m1="a", m2="b"),  # not the judge's: ignored
        ]
    )
    r = bias.self_preference(t)
    assert r.n_pairs == 2 and r.share.estimate == pytest.approx(0.75)


def test_logistic_fit_matches_the_closed_form_for_one_binary_covariate():
    # y | x=0 has mean 0.25, y | x=1 has mean 0.8: the MLE is logit of each group mean
    x = np.array([[1, 0]] * 4 + [[1, 1]] * 5, dtype=float)
    y = np.array([1, 0, 0, 0, 1, 1, 1, 1, 0], dtype=float)
    theta = logistic.fit_logistic(x, y, np.ones((1, 9)), ridge=0.0)[0]

    def logit(p):
        return np.log(p / (1 - p))

    assert theta[0] == pytest.approx(logit(0.25))
    assert theta[0] + theta[1] == pytest.approx(logit(0.8))
    # weights are counts: doubling a row is the same as writing it twice
    w = np.ones((2, 9))
    w[1, 0] = 2.0
    both = logistic.fit_logistic(x, y, w, ridge=0.0)
    x2, y2 = np.vstack([x, x[:1]]), np.append(y, y[0])
    assert both[1] == pytest.approx(logistic.fit_logistic(x2, y2, np.ones((1, 10)), ridge=0.0)[0])


def test_length_control_equals_raw_when_lengths_never_differ():
    rows = [
        swap(f"p{i}", w12, w21, m1="model", m2="base")
        for i, (w12, w21) in enumerate([(1, 1), (1, 2), (2, 2), (1, 1), (0, 1), (2, 1)])
    ]
    lc = bias.length_controlled(bias.table(rows), "base")
    (rate,) = lc.rates
    raw = (1 + 0.5 + 0 + 1 + 0.75 + 0.5) / 6
    assert rate.raw.estimate == pytest.approx(raw)
    assert rate.length_controlled.estimate == pytest.approx(raw, abs=1e-3)
    assert lc.length_sd == 0.0


def test_length_control_puts_the_baseline_on_either_side():
    a = bias.length_controlled(
        bias.table([swap("p", 1, 1, m1="m", m2="base"), swap("q", 2, 2, m1="base", m2="m")]), "base"
    )
    assert a.rates[0].raw.estimate == 1.0
    with pytest.raises(ValueError, match="no parsed pairs against baseline"):
        bias.length_controlled(bias.table([swap("p", 1, 1, m1="m", m2="n")]), "base")


def test_table_refuses_mixed_judges_and_empty_input():
    with pytest.raises(ValueError, match="one judge"):
        bias.table([swap("a", 1, 1, judge="j1"), swap("b", 1, 1, judge="j2")])
    with pytest.raises(ValueError, match="no judged pairs"):
        bias.table([])


def test_table_refuses_judgments_of_another_pair_or_order():
    good = swap("a", 1, 1)
    with pytest.raises(ValueError, match="pair a"):
        bias.table(
            [Swap(good.pair, good.first, Judgment(pair_id="other", order="21", pick="A", judge="j", simulated=False))]
        )
    with pytest.raises(ValueError, match="pair a"):
        bias.table([Swap(good.pair, good.second, good.first)])


def test_table_slicing_by_kind():
    rows = [swap("a", 1, 1), swap("b", 2, 2)]
    t = bias.table(rows)
    assert t.of_kind("k").n == 2 and t.of_kind("other").n == 0
    assert t.where([True, False]).pair_ids.tolist() == ["a"]


def test_table_take_is_an_index_resample_with_repeats():
    rows = [swap("a", 1, 1, out1="xx"), swap("b", 2, 1), swap("c", 0, 2)]
    taken = bias.table(rows).take([2, 0, 0])
    again = bias.table([rows[2], rows[0], rows[0]])
    for col in ("pair_ids", "w12", "w21", "label", "len_1", "len_2", "model_1", "model_2", "kind"):
        assert getattr(taken, col).tolist() == getattr(again, col).tolist(), col


def test_report_measures_every_set_of_a_battery():
    from labkit.experiments.judging import pairs as P
    from labkit.experiments.judging.simjudge import SimulatedJudge, simulated_own

    qs = P.make_questions(40, seed=1)
    j = SimulatedJudge(k=3.0, beta=1.0, phi=0.5, delta=0.5, seed=1)
    rep = bias.report(j.run(P.battery(qs, 1, simulated_own(qs), j.name)), resamples=200)
    assert rep.simulated and rep.n_unparseable == 0
    assert rep.position.n_pairs == 40 and rep.padded_wrong.n_pairs == 40
    assert rep.verbosity.n_pairs == 40 and rep.self_preference.n_pairs == 40
    assert {r.model for r in rep.length.rates} == {"writer/padded", "writer/terse", "writer/strong"}
    assert rep.fit.n_pairs == 40 * 7  # 1 correctness + 2 verbosity + 3 writer + 1 self per question
    # without own answers and writers, those parts are absent rather than invented
    part = bias.report(j.run(P.correctness_pairs(qs, 1)), resamples=200)
    assert part.self_preference is None and part.length is None and part.verbosity is None


def test_fit_flags_a_judge_that_always_says_a():
    # slot A every time: position explains everything and the MLE of β is infinite
    t = bias.table([swap(f"p{i}", 1, 2, label=1 + i % 2) for i in range(10)])
    fit = bias.fit_judge(t, resamples=50)
    assert fit.separated and fit.beta.estimate > 5
    mixed = bias.table([swap("a", 1, 2), swap("b", 1, 1), swap("c", 2, 2)])
    assert not bias.fit_judge(mixed, resamples=50).separated

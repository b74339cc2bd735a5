import json

from labkit.experiments.judging import bias, pairs
from labkit.experiments.judging import selfcorrect as sc
from labkit.experiments.judging.simjudge import SimulatedJudge, simulated_own
from labkit.views import charts_judge as cj

QS = pairs.make_questions(20, seed=0)
JUDGE = SimulatedJudge(beta=1.0, phi=0.5, delta=0.5)
SWAPS = JUDGE.run(pairs.battery(QS, 0, simulated_own(QS), JUDGE.name))
REPORT = bias.report(SWAPS, resamples=100)


def _spec(chart):
    return json.dumps(chart.to_dict(), ensure_ascii=False)  # to_dict validates against the Vega-Lite schema


def test_bias_charts_build_and_label_the_simulated_judge():
    for chart in (
        cj.position_chart([REPORT.position]),
        cj.scoring_chart([REPORT.position]),
        cj.share_chart([REPORT.verbosity, REPORT.self_preference]),
        cj.winrate_chart(REPORT.length),
    ):
        assert "sim/judge (simulated)" in _spec(chart)


def test_two_judges_sit_side_by_side():
    other = bias.report(SimulatedJudge(name="other").run(pairs.correctness_pairs(QS)), resamples=100)
    spec = _spec(cj.position_chart([REPORT.position, other.position]))
    assert "yOffset" in spec and "other (simulated)" in spec


def test_self_correction_charts():
    run = sc.run_intrinsic(QS, sc.RandomReanswerer(0.3), rounds=2)
    acc = _spec(cj.accuracy_chart(sc.load_huang(), {cj.who(run.answerer, run.simulated): sc.accuracy(run)}))
    assert "GPT-4 · GSM8K" in acc and "sim/random-reanswerer (simulated)" in acc and "Huang et al. 2024" in acc
    assert "right → wrong" in _spec(cj.transitions_chart(sc.transitions(run), "t"))
    assert "oracle stopping" in _spec(cj.stopping_chart(sc.accuracy(run), sc.oracle_stopping(run), "s"))


def test_swap_card_escapes_text_and_says_when_the_verdict_flipped():
    swap = next(s for s in SWAPS if s.flipped)
    card = cj.swap_html(swap)
    assert "flipped with the order" in card and "sim/judge (simulated)" in card
    from labkit.experiments.judging.judge import Judgment, Swap
    from labkit.experiments.judging.pairs import Pair

    evil = Pair(id="x", question="<script>alert(1)</script>", output_1="a", output_2="b", label=1)
    held = Swap(
        evil,
        Judgment(pair_id="x", order="12", pick="A", judge="j", simulated=False),
        Judgment(pair_id="x", order="21", pick="B", judge="j", simulated=False),
    )
    card = cj.swap_html(held)
    assert "<script>" not in card and "held in both orders" in card


def test_who_labels_only_simulated_once():
    assert cj.who("m", False) == "m"
    assert cj.who("m", True) == "m (simulated)"
    assert cj.who("m (simulated)", True) == "m (simulated)"


def test_two_judges_with_one_name_are_refused():
    import pytest

    with pytest.raises(ValueError, match="share a name"):
        cj.position_chart([REPORT.position, REPORT.position])

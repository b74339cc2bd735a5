"""The judge-bias notebook runs headless on the offline default, and falls back visibly.

Offline default: the session's one headless run (tests/conftest.py: headless). The fallback
case is a second configuration (an unusable LABKIT_MODEL), so it is a run of its own."""


def test_lead_pair_is_judged_by_the_real_model_or_says_it_fell_back(headless):
    got = headless("judge_bias").check()
    assert got["sim_simulated"] and got["huang_rows"] == 14
    assert got["ae"] == [0.66, 0.51, 1] and got["ae_variants"] == [True, True, True]  # the AlpacaEval 2 section
    if got["why"] is None:  # the offline model answered: its verdict came from answer-token log-probabilities
        assert got["judge"] == "labkit/smollm2" and not got["simulated"] and got["probs"]
    else:  # it could not be used: the notebook says so and shows the simulated judge
        assert got["simulated"] and got["warned"]


def test_unavailable_model_falls_back_visibly_to_the_simulated_judge(headless):
    got = headless("judge_bias", LABKIT_MODEL="labkit/gguf:/nonexistent/model.gguf").check()
    assert got["why"].startswith("ModelUnavailable") and "/nonexistent/model.gguf" in got["why"]
    assert got["simulated"] and got["judge"] == "sim/judge" and got["warned"]
    assert got["flipped"]  # the simulated judge (β = 1.5) still shows the swap flipping a verdict
    assert got["pair_pages"]  # the pair stepper carries every pair's prepared card: no kernel per step

"""The judge-bias notebook opens on recorded SmolLM2 judgments; the live call is behind a button.

Opening: the session's one headless run (tests/conftest.py: headless) — no model runs, litellm is
never imported. The live path (what the button runs) is called directly here: on SmolLM2 it
gives the recorded verdicts again, and an unusable model falls back visibly."""

from labkit.views import judge_page as page


def test_the_notebook_opens_on_the_recorded_smollm2_judgments(headless):
    got = headless("judge_bias").check()
    assert got["sim_simulated"] and got["huang_rows"] == 14
    assert got["ae"] == [0.66, 0.51, 1] and got["ae_variants"] == [True, True, True]  # the AlpacaEval 2 section
    assert got["recorded"] and got["why"] is None
    assert got["judge"] == "labkit/smollm2 (recorded run, replayed)" and not got["simulated"]
    assert got["probs"] and got["flipped"]  # the recorded verdict came from answer-token log-probabilities
    assert got["litellm"] is False  # opening called no model, so litellm was never imported
    assert got["pair_pages"]  # the pair stepper carries every pair's prepared card: no kernel per step


def test_asking_smollm2_live_gives_the_recorded_verdicts():
    judge, lead, seen, why = page.lead_pair(page.RECORDED_MODEL, None)
    assert why is None and judge.model == "labkit/smollm2"
    assert all(not s.first.simulated and s.first.probs is not None for s in seen)
    rec_lead, recorded = page.recorded_lead()
    assert [(s.pair.id, s.first.pick, s.second.pick) for s in seen] == [
        (s.pair.id, s.first.pick, s.second.pick) for s in recorded
    ]  # the recording is what the model says (re-record with page.record_lead() if this changes)
    assert (lead is None) == (rec_lead is None)


def test_an_unavailable_model_falls_back_visibly_to_the_simulated_judge():
    _, lead, seen, why = page.lead_pair("labkit/gguf:/nonexistent/model.gguf", None)
    assert why is not None and why.startswith("ModelUnavailable") and "/nonexistent/model.gguf" in why
    shown = lead or seen[-1]
    assert shown.first.simulated and shown.first.judge == "sim/judge"
    assert lead is not None and lead.flipped  # the simulated judge (β = 1.5) still shows the swap flipping

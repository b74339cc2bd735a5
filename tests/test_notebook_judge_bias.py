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


def test_the_real_judges_section_shows_llmbar_rescored_by_labkit(headless):
    got = headless("judge_bias").check()
    assert got["llmbar_title"] and got["llmbar_strategy"] == "Vanilla"
    # the intro, three charts, two tables and the stepper's note each carry the source label
    assert got["llmbar_labels"] >= 7
    assert got["llmbar_rows"] == 6 * 5  # every judge on every set under the chosen strategy
    natural = {r["judge"]: r for r in got["llmbar_table"]}
    assert set(natural) == {"GPT-4", "ChatGPT", "ChatGPT-0301", "PaLM2", "LLaMA2", "Falcon"}
    gpt4 = natural["GPT-4"]  # the authors' statistics.json: 95 / 100, 96 / 100, 95.5%, equal 95 / 100
    assert (gpt4["instances"], gpt4["accuracy, order 1 (%)"], gpt4["accuracy, order 2 (%)"]) == (100, 95.0, 96.0)
    assert (gpt4["swap-averaged accuracy (%)"], gpt4["same verdict both orders (%)"]) == (95.5, 95.0)
    # the flip stepper: ChatGPT's instances whose verdict changed with the order, each card prepared
    flips = got["llmbar_flips"]
    assert len(flips) == 143 and all(a in (1, 2) and b in (1, 2) and a != b for _, a, b, _ in flips)
    assert got["llmbar_flip_pages"] and got["llmbar_flips_shown"]

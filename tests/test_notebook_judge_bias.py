"""The judge-bias notebook runs headless on the offline default, and falls back visibly."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "judge_bias.py"
ENV = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
ENV.pop("LABKIT_MODEL", None)

# Runs the app in a fresh interpreter and reports what its cells defined and showed.
PROBE = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("judge_bias_nb", sys.argv[1])
nb = importlib.util.module_from_spec(spec)
spec.loader.exec_module(nb)
outputs, defs = nb.app.run()
lead = defs["lead"] or defs["lead_seen"][-1]
shown = " ".join(str(getattr(o, "text", "")) for o in outputs if o is not None)
print(json.dumps({
    "why": defs["lead_why"], "judge": lead.first.judge, "simulated": lead.first.simulated,
    "flipped": lead.flipped, "probs": lead.first.probs is not None,
    "sim_simulated": defs["sim"].simulated, "warned": "simulated judge" in shown,
    "huang_rows": len(defs["sc"].load_huang()),
    "pair_pages": [defs["cj"].swap_html(s) for s in defs["shown_swaps"]]
                  == list(defs["stepper"].widget.pages) != [],
    "ae": [round(defs["ae"].raw.r.estimate, 2), round(defs["ae"].lc.r.estimate, 2), defs["ae"].null_model.lc_rank],
    "ae_variants": [e.shared < e.alpacaeval for e in defs["variant_errors"]],
}))
"""


def _probe(env):
    proc = subprocess.run([sys.executable, "-c", PROBE, str(NOTEBOOK)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_runs_headless_on_the_offline_default():
    proc = subprocess.run([sys.executable, str(NOTEBOOK)], cwd=ROOT, env=ENV, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]


def test_lead_pair_is_judged_by_the_real_model_or_says_it_fell_back():
    got = _probe(ENV)
    assert got["sim_simulated"] and got["huang_rows"] == 14
    assert got["ae"] == [0.66, 0.51, 1] and got["ae_variants"] == [True, True, True]  # the AlpacaEval 2 section
    if got["why"] is None:  # the offline model answered: its verdict came from answer-token log-probabilities
        assert got["judge"] == "labkit/smollm2" and not got["simulated"] and got["probs"]
    else:  # it could not be used: the notebook says so and shows the simulated judge
        assert got["simulated"] and got["warned"]


def test_unavailable_model_falls_back_visibly_to_the_simulated_judge():
    got = _probe({**ENV, "LABKIT_MODEL": "labkit/gguf:/nonexistent/model.gguf"})
    assert got["why"].startswith("ModelUnavailable") and "/nonexistent/model.gguf" in got["why"]
    assert got["simulated"] and got["judge"] == "sim/judge" and got["warned"]
    assert got["flipped"]  # the simulated judge (β = 1.5) still shows the swap flipping a verdict
    assert got["pair_pages"]  # the pair stepper carries every pair's prepared card: no kernel per step

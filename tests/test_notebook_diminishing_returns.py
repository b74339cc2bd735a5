"""The diminishing-returns notebook runs headless, lints clean, and shows numbers it computed.

(`python notebooks/diminishing_returns.py` exiting 0 is also checked by tests/test_notebooks.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "diminishing_returns.py"
ENV = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
ENV.pop("LABKIT_MODEL", None)

# Runs the notebook headless (marimo's script mode) and reports what its cells computed.
PROBE = f"""
import json, sys
sys.path.insert(0, {str(NOTEBOOK.parent)!r})
from diminishing_returns import app
_, defs = app.run()
t = defs["table"]
r = defs["result"]
print(json.dumps({{
    "net": t["net"].to_list()[1:],
    "cumulative": t["cumulative_fixed"].to_list(),
    "correct": t["correct"].to_list(),
    "real_cases": len(r.cases),
    "real_rounds": r.rounds_run,
    "real_label": __import__("labkit.experiments.repair", fromlist=["label"]).label(r),
    "real_net": defs["real_table"]["net"].to_list(),
}}))
"""


def test_notebook_runs_headless_and_computes_the_chapter_numbers() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["net"] == [31, 4, -4]
    assert out["cumulative"] == sorted(out["cumulative"]) and out["cumulative"][3] > out["cumulative"][2]
    assert out["correct"][3] < out["correct"][2]
    assert out["real_cases"] >= 2 and out["real_rounds"] >= 1
    assert "simulated" in out["real_label"]
    assert len(out["real_net"]) == out["real_rounds"] + 1


def test_marimo_check_is_clean() -> None:
    marimo = Path(sys.executable).with_name("marimo")
    proc = subprocess.run([str(marimo), "check", str(NOTEBOOK)], cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and not proc.stdout.strip(), proc.stdout + proc.stderr

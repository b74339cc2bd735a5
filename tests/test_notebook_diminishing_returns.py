"""The diminishing-returns notebook runs headless, lints clean, and shows numbers it computed.

(Its run exiting cleanly is also checked by tests/test_notebooks.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "diminishing_returns.py"
ENV = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
ENV.pop("LABKIT_MODEL", None)


@pytest.fixture(scope="module")
def computed(headless) -> dict:
    """What the notebook computed in the session's one headless run (tests/conftest.py, cold:
    every real case validated), plus a replay of the real run's keep decisions with each case's
    measured patch labels (an independent check of the hidden scoring)."""
    from labkit.experiments import repair

    out = dict(headless("diminishing_returns").check())
    cases = {c.id: c for c in repair.load_cases()}
    held = dict.fromkeys(out["cases"], "original")
    expected = []
    for k in range(out["real_rounds"] + 1):
        for rnd, raw in out["decisions"]:
            d = json.loads(raw)
            if rnd == k:
                held[d["case"]] = d["proposal"]
        expected.append(
            sum(
                cases[c].initially_correct if s == "original" else cases[c].patch(s).effect == "resolves"
                for c, s in held.items()
            )
        )
    out["all_cases"] = len(cases)
    out["replayed_correct"] = expected
    return out


def test_notebook_computes_the_chapter_numbers(computed: dict) -> None:
    out = computed
    assert out["net"] == [31, 4, -4]
    assert out["cumulative"] == sorted(out["cumulative"]) and out["cumulative"][3] > out["cumulative"][2]
    assert out["correct"][3] < out["correct"][2]


def test_the_headless_run_is_the_readers_run_on_every_case(computed: dict) -> None:
    out = computed
    assert out["real_cases"] == out["all_cases"] >= 30  # no subset for headless runs
    assert out["real_rounds"] == 4  # the slider's default, no shortened run
    assert "simulated" in out["real_label"]
    assert len(out["real_net"]) == out["real_rounds"] + 1
    assert out["real_net"] == [f - b for f, b in zip(out["real_fixed"], out["real_broken"], strict=True)]
    # The hidden scoring agrees with the measured labels of the patches each case held.
    assert out["real_correct"] == out["replayed_correct"]


def test_marimo_check_is_clean() -> None:
    marimo = Path(sys.executable).with_name("marimo")
    proc = subprocess.run(
        [str(marimo), "check", str(NOTEBOOK)], cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0 and not proc.stdout.strip(), proc.stdout + proc.stderr


def test_the_headless_run_shows_the_recorded_run_at_the_defaults(computed: dict) -> None:
    """At the sliders' defaults the notebook shows data/diminishing_returns/repair_run.sqlite
    (tests/test_repair_recording.py re-measures it): its rounds, its decisions, in its order."""
    from labkit.experiments import repair
    from labkit.experiments import repair_recording as recording

    shown = recording.recorded(recording.DEFAULT, repair.load_cases())
    assert shown is not None
    table = shown.per_round()
    assert computed["real_net"] == table["net"].to_list() and computed["real_correct"] == table["correct"].to_list()
    decided = [[r, d] for r, k, d in shown.events().select("round", "kind", "detail").iter_rows() if k == "decide"]
    assert computed["decisions"] == decided != []

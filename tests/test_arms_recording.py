"""The recorded default-setting SIMULATED sweep (data/arms/simulated_default.*) that
notebooks/reflection_worth_it.{py,ipynb} show on open: it is what labkit computes with the
command in its .json, and its setting is the notebook's default setting (they cannot drift apart)."""

from __future__ import annotations

import dataclasses
import html
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from recordings import assert_as_recorded

from labkit.core.errors import InvalidSetting
from labkit.experiments.arms.plans import budget_plan, parse_sim
from labkit.record.ledger import Ledger
from labkit.views import arms_page as page

ROOT = Path(__file__).resolve().parents[1]
RECORDING = ROOT / "data" / "arms" / f"{page.SIM_RECORDING}.sqlite"
TIMING = {"seq", "started_at", "ended_at", "wall_seconds"}  # when and how long, not what happened


def _meta() -> dict[str, Any]:
    return dict(json.loads(RECORDING.with_suffix(".json").read_text(encoding="utf-8")))


def _untimed(detail: Any) -> Any:
    """`detail` (or evidence) without how long things took: wall seconds, and each test result's duration."""
    if isinstance(detail, dict):
        out = {k: _untimed(v) for k, v in detail.items() if k != "wall_seconds"}
        if "results" in out:  # [test id, outcome, message, seconds]
            out["results"] = [r[:3] for r in out["results"]]
        return out
    if isinstance(detail, list):
        return [_untimed(v) for v in detail]
    if isinstance(detail, str):  # a stop reason quotes the time spent so far
        return re.sub(r"wall_seconds=[0-9.e+-]+", "wall_seconds=…", detail)
    return detail


def _here(obj: Any, validators: set[str]) -> Any:
    """`obj` without what names the machine rather than the run: the validator's id digests the
    interpreter's path (a clone elsewhere has another), so it reads '<validator>', and the verdict
    digests made from it are dropped. Test results, buckets and decisions stay compared."""
    if isinstance(obj, dict):
        return {k: _here(v, validators) for k, v in obj.items() if k != "digest"}
    if isinstance(obj, list):
        return [_here(v, validators) for v in obj]
    return "<validator>" if isinstance(obj, str) and obj in validators else obj


def _content(blob: Any) -> Any:
    """A stored blob; a bare digest (a verdict's, machine-specific) reads '<digest>'."""
    return "<digest>" if isinstance(blob, str) and re.fullmatch(r"[0-9a-f]{16}", blob) else blob


def _events(ledger: Ledger, run_id: str) -> list[dict[str, Any]]:
    out = []
    events = list(ledger.events(run_id))
    validators = {str(e.detail["validator"]) for e in events if "validator" in e.detail}
    for e in events:
        # content is compared, not its hash: a verdict digest (machine-specific, see _here) is passed
        # on as the next step's input, so hashes of anything downstream of a verification differ
        row = {
            f.name: getattr(e, f.name)
            for f in dataclasses.fields(e)
            if f.name not in TIMING | {"output_hash", "input_hash"}
        }
        row["detail"] = _untimed(json.loads(json.dumps(dict(e.detail))))
        row["evidence"] = _untimed(json.loads(e.evidence)) if e.evidence else ""
        row["outputs"] = _content(ledger.get(e.output_hash)) if e.output_hash else None
        row["inputs"] = _content(ledger.get(e.input_hash)) if e.input_hash else None
        out.append(_here(row, validators))
    return out


def test_recording_is_the_notebooks_default_setting() -> None:
    meta = _meta()
    defaults = {k: c.value for k, c in page.SIM.items()}
    assert meta["model"] == "simulated" and meta["stronger"] == "sim" and meta["ran"] == meta["jobs"] == 224
    assert meta["sim"] == defaults, "re-record data/arms/simulated_default (see data/arms/README.md)"
    assert meta["limit"]["calls"] == page.BUDGET.value
    assert (meta["suite"], tuple(meta["cases"]), tuple(meta["arms"])) == ("repair", page.SIM_CASES, page.ARM_ORDER)
    assert meta["seeds"] == ",".join(map(str, page.SIM_SEEDS))
    recorded = page.recorded_default()
    assert recorded is not None
    assert recorded[2] == page.sim_plan(page.BUDGET.value, **page.sim_settings())  # the same plan the page computes
    assert sorted(recorded[0].runs()) == sorted(
        f"arms/repair/{c}/{a}/{s}" for c in page.SIM_CASES for a in page.ARM_ORDER for s in page.SIM_SEEDS
    )
    # on open (the sliders' defaults, a slider's float noise included) the page shows the recording
    ledger, label = page.simulated(page.BUDGET.value, {**page.sim_settings(), "p_fix_evidence": 0.6000000000000001})
    assert label == page.RECORDED_LABEL == "SIMULATED (recorded run of the default setting)"
    assert ledger is recorded[0] and ledger.path == str(RECORDING)
    said = page.budget_md(ledger, page.BUDGET.value, label)
    assert said.startswith(f"**{page.RECORDED_LABEL}**") and "How these runs were recorded" in said
    from labkit.views import arms_real  # the command itself is in the page's folded commands block

    assert html.escape(meta["command"]) in arms_real.commands_html(page.real_ledgers())
    assert page.SIM_RECORDING not in {m.get("command", "") for _, m in page.real_ledgers().values()}
    assert "simulated" not in {m.get("model") for _, m in page.real_ledgers().values()}


def test_another_setting_or_a_recording_of_another_setting_is_computed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[tuple[Any, ...]] = []
    live = Ledger()

    def sweep(calls: int, **sim: float) -> Ledger:  # stands in for the 224-job sweep: which one is asked for
        asked.append((calls, sim))
        return live

    monkeypatch.setattr(page, "simulated_sweep", sweep)
    assert page.simulated(2, page.sim_settings()) == (live, page.LIVE_LABEL)
    assert page.simulated(3, page.sim_settings({"rho": 0.2})) == (live, page.LIVE_LABEL)
    assert asked == [(2, page.sim_settings()), (3, page.sim_settings({"rho": 0.2}))]
    meta = {**_meta(), "sim": {**_meta()["sim"], "rho": 0.3}}  # a recording of another setting
    for name, what in (("other_setting", meta), ("other_jobs", {**meta, "seeds": "0"})):
        (tmp_path / name).mkdir()
        shutil.copy(RECORDING, tmp_path / name / RECORDING.name)
        (tmp_path / name / RECORDING.with_suffix(".json").name).write_text(json.dumps(what))
    other = tmp_path / "other_setting"
    assert page.simulated(3, page.sim_settings(), folder=other)[1] == page.LIVE_LABEL
    assert page.simulated(3, page.sim_settings({"rho": 0.3}), folder=other)[1] == page.RECORDED_LABEL
    assert page.recorded_default(tmp_path / "other_jobs") is None  # other jobs than the page's: not its sweep
    assert page.recorded_default(tmp_path / "nothing_recorded") is None
    assert len(asked) == 3  # the live sweep was asked for the setting the copy did not record


def test_recording_is_what_labkit_computes_with_its_command(tmp_path: Path) -> None:
    """Re-run the recording's own command for its first case (every arm and seed: the first 28
    jobs in the order they were recorded, so the process-wide verdict cache sees the same history)
    in a fresh process, and compare every event of those jobs, timings aside, exactly."""
    meta = _meta()
    argv = shlex.split(meta["command"])
    assert argv[:3] == ["python", "-m", "labkit.experiments.arms"]
    argv = argv[3:]
    first = meta["cases"][0]
    argv[argv.index("--cases") + 1] = first
    argv[argv.index("--out") + 1] = str(tmp_path / "again.sqlite")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run(
        [sys.executable, "-m", "labkit.experiments.arms", *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    recorded = Ledger(RECORDING, read_only=True)
    again = Ledger(tmp_path / "again.sqlite", read_only=True)
    runs = sorted(again.runs())
    assert len(runs) == len(page.ARM_ORDER) * len(page.SIM_SEEDS) and all(f"/{first}/" in r for r in runs)
    for run_id in runs:
        assert_as_recorded(_events(again, run_id), _events(recorded, run_id), meta, f"{run_id}'s events")
    assert json.loads((tmp_path / "again.json").read_text())["sim"] == meta["sim"]


def test_plan_settings_are_checked_by_name() -> None:
    assert parse_sim("p_fix_blind=0.3, rho=0.5") == {"p_fix_blind": 0.3, "rho": 0.5}
    with pytest.raises(InvalidSetting, match=r"--sim item 'rho' is not NAME=NUMBER"):
        parse_sim("rho")
    with pytest.raises(InvalidSetting, match=r"unknown simulated-policy parameter\(s\) \['p_fix'\]"):
        parse_sim("p_fix=0.5")
    with pytest.raises(InvalidSetting, match="at least 1 call"):
        budget_plan(0)
    plan = budget_plan(3, wall=600.0, stronger="sim", sim={"rho": 0.5})
    assert (plan.limit.calls, plan.limit.tokens, plan.limit.cost_units, plan.n, plan.rounds) == (3, 3072, 11.0, 3, 3)

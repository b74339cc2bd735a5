"""The recorded SIMULATED Reflexion measurements (data/memory/simulated_reflexion.json) that
section 5 of notebooks/memory.{py,ipynb} shows on open: they are what labkit computes (a slice
of the rows is recomputed in-process with real validation and compared exactly, here for the
HumanEval section and in tests/test_memory_truncation.py for the truncation one; every interval
is recomputed from the rows), their setting is labkit's, and the page shows them, labelled,
without running anything."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from recordings import assert_as_recorded

from labkit.core.errors import ReferenceDataMissing
from labkit.experiments.memory import on_humaneval as he
from labkit.experiments.memory import recording as rec
from labkit.experiments.memory import reflexion_repair as rx
from labkit.experiments.memory import truncation as tr
from labkit.grading.verdicts import Checker
from labkit.views import memory_buffer as buf

ROOT = Path(__file__).resolve().parents[1]


def _record() -> dict[str, Any]:
    return dict(json.loads(buf.RECORDING.read_text(encoding="utf-8")))


def _ivs(d: dict[Any, Any]) -> list[list[Any]]:
    return [[*k, i.estimate, i.low, i.high] for k, i in d.items()]


def test_the_recording_is_labkits_setting_and_command() -> None:
    r = _record()
    assert r["command"] == "python -m labkit.experiments.memory.recording --out data/memory/simulated_reflexion.json"
    assert r["command"] in (ROOT / "data" / "memory" / "README.md").read_text(encoding="utf-8")
    h, t = r["humaneval"], r["truncation"]
    assert h["setting"] == json.loads(json.dumps(asdict(rec.HumanEvalSetting())))
    assert t["setting"] == json.loads(json.dumps(asdict(tr.Setting())))
    assert [a["name"] for a in h["arms"]] == [a.name for a in rec.humaneval_arms()]
    assert [a["name"] for a in t["arms"]] == [a.name for a in rec.budget_arms(tr.Setting())]
    assert h["cases"] == he.draw(12, 15)  # the seeded draw, fixed before the run
    units = len(h["setting"]["seeds"]) * len(h["cases"]) * h["setting"]["trials"] * len(h["arms"])
    assert len(h["rows"]) == units


def test_every_recorded_interval_is_recomputed_exactly_from_the_recorded_rows() -> None:
    r = _record()
    for name in ("humaneval", "truncation"):
        s = r[name]
        frame, arms, trials = rec.rows(s), [a["name"] for a in s["arms"]], s["setting"]["trials"]
        assert_as_recorded(_ivs(rec.success(frame, arms, trials)), s["success"], r, f"{name}: the success intervals")
        pairs = list(dict.fromkeys((a, b) for a, b, *_ in s["differences"]))
        assert_as_recorded(_ivs(rec.differences(frame, pairs, trials)), s["differences"], r, f"{name}: the differences")


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_slice_of_the_recording_is_recomputed_exactly_in_process() -> None:
    # real validation of a few problems' states (their mutants included): under a minute on a shared CPU
    r, checker = _record(), Checker()
    h = r["humaneval"]
    recorded = rec.rows(h)
    problems = he.load(h["cases"][:3], mutants=h["setting"]["mutants"], checker=checker)
    for arm in (rec.humaneval_arms()[1], rec.humaneval_arms()[3]):  # the buffer, and the actor that ignores it
        for seed in (0, 5):
            got, _ = rx.run_arm(
                arm, problems, checker, trials=h["setting"]["trials"], seed=seed, p_fix=h["setting"]["p_fix"]
            )
            want = recorded.filter(
                (pl.col("arm") == arm.name) & (pl.col("seed") == seed) & pl.col("case").is_in([c.id for c in problems])
            )
            assert_as_recorded(
                got.sort("case", "trial").to_dicts(),
                want.select("case", "trial", "correct").to_dicts(),
                r,
                f"humaneval rows of {arm.name}, seed {seed}",
            )
    # the truncation section's slice is re-measured (and compared exactly) by tests/test_memory_truncation.py


def test_the_recorded_effects_have_the_chapters_directions() -> None:
    r = _record()
    diff = {(a, t): (e, lo, hi) for a, _, t, e, lo, hi in r["humaneval"]["differences"]}
    assert diff["buffer", 1] == (0, 0, 0) and diff["buffer", 2][1] > 0 and diff["buffer", 4][1] > 0
    assert all(diff["buffer, sparse reward", t] == (0, 0, 0) for t in range(1, 5))
    assert all(diff["buffer, actor ignores it", t] == (0, 0, 0) for t in range(1, 5))
    last = r["truncation"]["setting"]["trials"]
    tdiff = {a: (e, lo, hi) for a, _, t, e, lo, hi in r["truncation"]["differences"] if t == last}
    assert tdiff["tight (150 tok), keep newest"][2] < 0 and tdiff["tight (150 tok), keep oldest"][2] < 0
    assert tdiff["tight (150 tok), summarise"] == (0, 0, 0)


def test_the_page_shows_the_recording_labelled_simulated() -> None:
    r = buf.load()
    from labkit.views.jupyter import static_chart

    for chart in (buf.buffer_chart(r), buf.truncation_chart(r)):
        assert str(chart.to_dict()["title"]).startswith("SIMULATED")
        svg = static_chart(chart)._repr_svg_()  # the JupyterLab twin's offline SVG
        assert "SIMULATED" in svg and "http" not in svg.replace("http://www.w3.org", "")
    html = buf.buffer_html(r)
    e, lo, hi = next(d[3:] for d in r["humaneval"]["differences"] if d[:3] == ["buffer", "no memory", 2])
    assert "SIMULATED" in html and r["command"] in html and f"{e:+.3f} [{lo:.3f}, {hi:.3f}]" in html
    assert "<th" in html and "dtype" not in html and "i64" not in html
    trunc = buf.truncation_html(r)
    assert "SIMULATED" in trunc and "summarise" in trunc and "SIMULATED" in buf.BUFFER
    real = buf.smollm2_html(buf.smollm2())
    assert buf.smollm2()["command"] in real and real.count("0 / 6") == 6  # 2 arms × 3 trials, from the rows
    assert real.index("trial 1") < real.index("trial 2") < real.index("trial 3")


def test_a_missing_recording_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(buf, "RECORDING", tmp_path / "simulated_reflexion.json")
    with pytest.raises(ReferenceDataMissing, match=r"simulated_reflexion\.json is missing.*data/memory/README\.md"):
        buf.load()


@pytest.mark.parametrize(("text", "said"), [('{"rows": [1, 2', "cannot be read"), ("[1, 2]", "is not a recording")])
def test_a_damaged_recording_is_a_clear_error(tmp_path: Path, text: str, said: str) -> None:
    # one reader for every recording a page shows (core.paths.read_recording): a truncated or
    # wrong-shaped file names itself and the command that records it again
    from labkit.core.paths import read_recording
    from labkit.experiments.memory import demo

    path = tmp_path / "reflexion_demo.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ReferenceDataMissing, match=rf"reflexion_demo\.json {said}.*memory\.demo --out .*README"):
        demo.load(path)
    with pytest.raises(ReferenceDataMissing, match=rf"{said}.*`cmd`"):
        read_recording(path, "cmd")


def test_the_section_opens_without_running_an_experiment_or_a_model() -> None:
    code = (
        "import sys\nfrom labkit.views import memory_buffer as b\nr = b.load()\n"
        "b.buffer_chart(r).to_dict(); b.truncation_chart(r).to_dict(); b.buffer_html(r); b.truncation_html(r)\n"
        "b.smollm2_html(b.smollm2())\n"
        "print(sorted(m for m in sys.modules if m.startswith(('labkit.experiments', 'labkit.loop', 'litellm'))))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("notebook", ["memory.py", "memory.ipynb"])
def test_both_twins_show_the_section(notebook: str) -> None:
    text = (ROOT / "notebooks" / notebook).read_text(encoding="utf-8")
    for call in (
        "from labkit.views import memory_buffer as buf",
        "buf.load()",
        "buf.buffer_chart(buf_rec)",
        "buf.buffer_html(buf_rec)",
        "buf.truncation_chart(buf_rec)",
        "buf.truncation_html(buf_rec)",
        "buf.smollm2_html(buf.smollm2())",
    ):
        assert call in text, f"{notebook} lacks {call}"
    if notebook.endswith(".ipynb"):
        assert "static_chart(buf.buffer_chart" in text and "static_chart(buf.truncation_chart" in text

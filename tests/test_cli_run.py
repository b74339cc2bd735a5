"""`labkit run` before round 1: the reflector is checked, a run id is never reused by accident."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from labkit.cli import main
from labkit.record.ledger import Ledger

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def wide(monkeypatch):
    import labkit.cli.commands as app
    import labkit.cli.preflight as preflight

    for console in (app.out, app.err, preflight._err):
        monkeypatch.setattr(console, "width", 200)
    monkeypatch.delenv("LABKIT_MODEL", raising=False)


@pytest.fixture
def case(template_case: Path) -> Path:
    return template_case


def _labkit_error(err: str) -> str:
    lines = [x for x in err.splitlines() if x.startswith("labkit:")]
    assert len(lines) == 1, err
    return lines[0]


def test_a_keyless_provider_exits_2_before_round_1_without_importing_litellm(case, tmp_path):
    # A litellm that cannot be imported: the check must not need it (its import takes seconds,
    # and would read its price list) to say that the key is missing.
    fake = tmp_path / "fake"
    (fake / "litellm").mkdir(parents=True)
    (fake / "litellm" / "__init__.py").write_text("raise SystemExit('litellm was imported')\n")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "LABKIT_MODEL"}
    env.update(PYTHONPATH=f"{fake}{os.pathsep}{ROOT}", LITELLM_LOCAL_MODEL_COST_MAP="True", COLUMNS="200")
    ledger = tmp_path / "l.sqlite"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "labkit.cli",
            "run",
            str(case),
            "--reflector",
            "openai/gpt-4o-mini",
            "--ledger",
            str(ledger),
            "--run-id",
            "k",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert r.returncode == 2, r.stderr
    assert "litellm was imported" not in r.stderr
    line = _labkit_error(r.stderr)
    assert "'openai/gpt-4o-mini' (from --reflector) cannot be used" in line
    assert "needs OPENAI_API_KEY" in line and "`export OPENAI_API_KEY=<your key>; ./run lab`" in line
    assert not ledger.exists()  # nothing ran, nothing was recorded


def test_labkit_model_is_honoured_and_named(case, monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("LABKIT_MODEL", "openai/gpt-4o-mini")
    assert main(["run", str(case)]) == 2
    assert "(from $LABKIT_MODEL) cannot be used" in _labkit_error(capsys.readouterr().err)
    # --reflector wins over $LABKIT_MODEL, and the output says so
    assert main(["run", str(case), "--reflector", "replay:transcript.jsonl"]) == 0
    out = capsys.readouterr().out
    assert "(from --reflector); $LABKIT_MODEL=openai/gpt-4o-mini is not used: --reflector wins" in out


def test_an_unknown_labkit_model_exits_2(case, capsys):
    assert main(["run", str(case), "--reflector", "labkit/nonesuch"]) == 2
    assert "unknown labkit model 'labkit/nonesuch'" in _labkit_error(capsys.readouterr().err)


@pytest.mark.parametrize(
    ("transcript", "why"),
    [
        ('{"key": "main/round-1", "reply": 3}\n', "transcript.jsonl:1: 'reply' must be a string"),
        (
            '{"key": "other/round-1", "reply": "x"}\n',
            "no reply for branch 'main' round 1 (its branches: other)",
        ),
        ("", "no reply for branch 'main' round 1 (its branches: none)"),
    ],
    ids=["malformed", "another-branch", "used-up"],
)
def test_a_transcript_that_cannot_drive_round_1_exits_2(case, capsys, transcript, why):
    (case / "transcript.jsonl").write_text(transcript)
    assert main(["run", str(case)]) == 2
    assert why in _labkit_error(capsys.readouterr().err)


def test_a_reused_run_id_is_refused_unless_resumed(case, tmp_path, capsys):
    ledger = tmp_path / "l.sqlite"
    args = ["run", str(case), "--ledger", str(ledger), "--run-id", "tour", "--budget", "20"]
    assert main(args) == 0
    capsys.readouterr()
    with Ledger(ledger, read_only=True) as book:
        before = book.events("tour")
    assert main(args) == 2  # the README tour run twice: refused, not merged
    line = _labkit_error(capsys.readouterr().err)
    assert "run id 'tour' was run before" in line and "--resume" in line
    assert main([*args, "--resume"]) == 0  # a finished run, shown as recorded
    assert "stop: resolved" in capsys.readouterr().out
    with Ledger(ledger, read_only=True) as book:
        after = book.events("tour")
        charged = book.usage("tour", role="budget").cost_units
    assert len(after) == len(before) and charged == 3  # one run: costs not doubled, one stop
    assert sum(e.kind == "stop" and bool(e.detail.get("run")) for e in after) == 1
    assert main(["run", str(case), "--resume"]) == 2  # which run? it needs --ledger and --run-id


def test_an_imported_humaneval_case_says_its_transcript_replays_the_canonical_answer(tmp_path, capsys):
    he = tmp_path / "he"
    data = ROOT / "tests" / "fixtures" / "humaneval" / "problems.jsonl"
    assert main(["import", "humaneval", "HumanEval/2", str(he), "--data", str(data)]) == 0
    capsys.readouterr()
    assert main(["run", str(he)]) == 0
    out = capsys.readouterr().out
    assert "replays the reference solution, so 'resolved' checks the case, not a model" in out


def test_budget_messages_read_as_rounded_figures_with_units(case, capsys):
    from labkit.record.usage import readable

    recorded = (
        "cost_units needs 3 but 1 is left (limit cost_units=7; spent cost_units=6, wall_seconds=0.379697, calls=1)"
    )
    assert readable(recorded) == (
        "needs 3 cost units, 1 cost unit left (limit 7 cost units; spent 6 cost units, 0.38 s wall, 1 call)"
    )
    assert main(["run", str(case), "--budget", "2"]) == 1  # the start and one reflection: no retest
    captured = capsys.readouterr()
    assert "stop: budget exhausted" in captured.out and "cost units" in captured.out
    assert "wall_seconds=" not in captured.out + captured.err and "cost_units" not in captured.out

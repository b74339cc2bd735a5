"""The `labkit` command: every subcommand, its exit codes, and what it prints."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import polars as pl
import pytest

from labkit.cli import main
from labkit.record.ledger import Ledger

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


@pytest.fixture(autouse=True)
def wide(monkeypatch):
    """Tables unwrapped, so a test can find a whole line in them."""
    import labkit.cli.commands as app

    monkeypatch.setattr(app.out, "width", 200)
    monkeypatch.setattr(app.err, "width", 200)


def labkit(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "labkit.cli", *map(str, args)],
        capture_output=True,
        text=True,
        env={**ENV, "COLUMNS": "200"},
        timeout=240,
    )


def test_help_lists_every_command_without_importing_litellm():
    r = labkit("--help")
    assert r.returncode == 0, r.stderr
    for cmd in ("new-case", "check", "run", "ledger", "lab", "export", "import"):
        assert cmd in r.stdout
    code = "import sys, labkit.cli; print('litellm' in sys.modules, 'polars' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV)
    assert out.stdout.split() == ["False", "False"], out.stderr


@pytest.mark.parametrize(
    "cmd",
    ["new-case", "check", "run", "ledger", "lab", "export", "import humaneval", "import swebench"],
)
def test_every_subcommand_has_help(cmd, capsys):
    assert main([*cmd.split(), "--help"]) == 0
    assert "Usage: labkit" in capsys.readouterr().out


def test_usage_errors_exit_2(tmp_path, capsys):
    assert main(["bogus"]) == 2
    assert main(["check", str(tmp_path / "nope")]) == 2  # folder must exist
    assert main(["run", str(tmp_path), "--rounds", "0"]) == 2
    assert main(["ledger", str(tmp_path / "none.sqlite")]) == 2
    assert main(["run"]) == 2
    assert "Missing argument" in capsys.readouterr().err


def test_new_case_check_run_ledger(tmp_path, capsys):
    case = tmp_path / "mycase"
    assert main(["new-case", str(case)]) == 0
    assert (case / "tests" / "data" / "limits.json").is_file()
    line = json.loads((case / "transcript.jsonl").read_text())
    assert line["key"] == "main/round-1"
    record = json.loads(line["reply"])
    assert record["evidence_ref"] == "tests/test_limits.py::test_tenant_override_wins"
    assert record["diff"].startswith("--- a/limits.py")

    assert main(["check", str(case)]) == 0
    out = capsys.readouterr().out
    assert "transcript: 1 key(s), branches ['main']" in out
    assert "acceptance (F2P) 0/2 · protective (P2P) 2/2" in out
    assert "assert 100 == 500" in out  # the real failure message from pytest

    ledger = tmp_path / "l.sqlite"
    args = ["run", str(case), "--ledger", str(ledger), "--budget", "20", "--run-id", "t1"]
    assert main(args) == 0
    captured = capsys.readouterr()
    out = captured.out
    # each decision as the loop records it (stderr, above the progress bar), then the tables
    assert "round 1: keep — failing acceptance now passes" in captured.err
    assert "keep" in out and "failing acceptance now passes" in out
    assert "acceptance (F2P) 2/2 · protective (P2P) 2/2" in out
    assert "stop: resolved" in out
    with Ledger(ledger, read_only=True) as book:
        events = book.events("t1")
    kinds = [e.kind for e in events if e.role != "budget"]
    assert kinds.count("verify") == 2 and "decide" in kinds and kinds[-1] == "stop"
    assert {e.detail.get("status") for e in events if e.role == "budget"} >= {"reserved", "settled"}

    parquet = tmp_path / "l.parquet"
    assert main(["ledger", str(ledger), "--parquet", str(parquet)]) == 0
    out = capsys.readouterr().out
    with Ledger(ledger, read_only=True) as book:
        charged = book.usage("t1", role="budget").cost_units
        rounds = book.rounds("t1")
        doubled = book.frame("t1")["cost_units"].sum()
    # each charge once: the budget's; a plain sum of the events counts it twice
    assert rounds["cost_units"].sum() == charged == 3 and doubled == 2 * charged
    assert rounds.select("round", "decision").rows() == [(0, ""), (1, "keep")]
    assert "run t1" in out and "keep" in out and "stop: resolved" in out
    assert "3 cost units in all, counted once (from the budget's charges)" in out
    assert pl.read_parquet(parquet).filter(pl.col("kind") == "decide").height == 1


def test_a_failed_run_exits_1_with_one_line_naming_the_cause(tmp_path, capsys):
    case = tmp_path / "c"
    assert main(["new-case", str(case)]) == 0
    (case / "transcript.jsonl").write_text('{"key": "main/round-1", "reply": "I would rather not"}\n')
    capsys.readouterr()
    # An unusable reply, then none: the round cap stops it, and the last line says why.
    assert main(["run", str(case), "--rounds", "2"]) == 1
    captured = capsys.readouterr()
    lines = [x for x in captured.err.splitlines() if x.startswith("labkit:")]
    assert len(lines) == 1 and lines[0].startswith(
        "labkit: not resolved: round cap reached (2); report unknowns (last reflection unusable: "
    )
    assert "no reply for key 'main/round-2'" in lines[0]
    assert "later rounds get no reply" in captured.out  # said before round 1


def test_run_scores_hidden_tests_after_the_run(tmp_path, capsys):
    case = tmp_path / "c"
    main(["new-case", str(case)])
    (case / "hidden").mkdir()
    (case / "hidden" / "test_hidden.py").write_text(
        "from pathlib import Path\n\nfrom limits import limit_for, load_limits\n\n"
        "LIMITS = load_limits(Path(__file__).parent / 'data' / 'limits.json')\n\n"
        "def test_unknown_tenant_free_plan():\n    assert limit_for(LIMITS, 'zed', 'free') == 5\n\n"
        "def test_override_beats_unknown_plan():\n    assert limit_for(LIMITS, 'acme', 'gold') == 500\n"
    )
    spec = json.loads((case / "case.json").read_text())
    spec["hidden"] = {
        "fail_to_pass": ["tests/test_hidden.py::test_override_beats_unknown_plan"],
        "pass_to_pass": ["tests/test_hidden.py::test_unknown_tenant_free_plan"],
    }
    (case / "case.json").write_text(json.dumps(spec))
    capsys.readouterr()
    assert main(["run", str(case)]) == 0
    out = capsys.readouterr().out
    hidden = out[out.index("final candidate on the hidden tests") :]
    assert "acceptance (F2P) 1/1 · protective (P2P) 1/1" in hidden


def test_malformed_case_exits_1_naming_the_field(tmp_path, capsys):
    case = tmp_path / "c"
    main(["new-case", str(case)])
    spec = json.loads((case / "case.json").read_text())
    spec["patches"]["fix"] = "patches/fix.diff"
    (case / "case.json").write_text(json.dumps(spec))
    capsys.readouterr()
    assert main(["check", str(case)]) == 1
    err = capsys.readouterr().err
    assert "CaseError" in err and "'patches.fix'" in err and "case.json" in err


def test_check_names_a_malformed_transcript_line(tmp_path, capsys):
    case = tmp_path / "c"
    main(["new-case", str(case)])
    with (case / "transcript.jsonl").open("a") as f:
        f.write('{"key": "main/round-2", "reply": {"not": "a string"}}\n')
    capsys.readouterr()
    assert main(["check", str(case)]) == 1
    assert "transcript.jsonl:2: 'reply' must be a string" in capsys.readouterr().err


def test_check_reports_a_collection_error(tmp_path, capsys):
    case = tmp_path / "c"
    main(["new-case", str(case)])
    module = case / "limits.py"
    module.write_text("import nonexistent_module\n" + module.read_text())
    capsys.readouterr()
    assert main(["check", str(case)]) == 1  # the protective tests cannot pass
    captured = capsys.readouterr()
    assert "ModuleNotFoundError: No module named 'nonexistent_module'" in captured.err


def test_import_commands(tmp_path, capsys):
    he = tmp_path / "he"
    assert (
        main(["import", "humaneval", "HumanEval/2", str(he), "--data", str(FIXTURES / "humaneval" / "problems.jsonl")])
        == 0
    )
    assert main(["run", str(he)]) == 0
    capsys.readouterr()
    assert main(["check", str(he), "--patches"]) == 0
    assert "canonical (canonical solution)" in capsys.readouterr().out
    swe = tmp_path / "swe"
    rec, repo = FIXTURES / "swebench" / "record.json", FIXTURES / "swebench" / "repo"
    assert main(["import", "swebench", str(rec), str(repo), str(swe)]) == 0
    assert main(["check", str(swe)]) == 0
    assert "not required: tests/test_wrap.py::test_hyphenates_long_words" in capsys.readouterr().out


def test_export_writes_an_offline_page(tmp_path):
    nb = tmp_path / "tiny.py"
    nb.write_text("import marimo\n\napp = marimo.App()\n\n\n@app.cell\ndef _():\n    x = 6 * 7\n    x\n    return\n")
    r = labkit("export", nb, "-o", tmp_path / "tiny.html")
    assert r.returncode == 0, r.stderr
    html = (tmp_path / "tiny.html").read_text()
    # the cell's output is in the page, its code is not (the static copy shows the app's outputs)
    assert "\\u003E42\\u003C/pre" in html and "6 * 7" not in html and "importmap" in html
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny.html", "tiny.py"]  # no __marimo__/


def test_export_finds_labkits_notebooks_from_any_folder(tmp_path, monkeypatch, capsys):
    from labkit.cli.commands import _find_notebook

    monkeypatch.chdir(tmp_path)  # outside the checkout
    want = ROOT / "notebooks" / "cache_isolation.py"
    for given in ("notebooks/cache_isolation.py", "cache_isolation.py", "cache_isolation"):
        assert _find_notebook(Path(given)) == want
    assert main(["export", "no_such_notebook"]) == 2
    assert "no notebook at no_such_notebook" in capsys.readouterr().err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_lab_serves_the_notebooks(tmp_path):
    (tmp_path / "tiny.py").write_text("import marimo\n\napp = marimo.App()\n")
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "labkit.cli", "lab", str(tmp_path), "--port", str(port), "--headless"],
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline, body = time.monotonic() + 90, ""
        while time.monotonic() < deadline and not body:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as resp:
                    body = resp.read().decode("utf-8", "replace")
            except OSError:
                assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
                time.sleep(0.5)
        assert "marimo" in body.lower()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def test_lab_without_notebooks_is_a_usage_error(tmp_path):
    assert main(["lab", str(tmp_path / "none")]) == 2


def test_live_ledger_tells_each_decision_once_as_recorded():
    from labkit.cli.live import LiveLedger, describe

    seen: list[str] = []
    book = LiveLedger(":memory:", lambda e: seen.append(describe(e)))
    book.record("r", 1, "decision", "decide", detail={"decision": "keep", "reason": "x"})
    book.record("r", 1, "validator", "verify")
    book.record_many(
        [
            {"run_id": "r", "round": 2, "role": "validator", "kind": "verify"},
            {"run_id": "r", "round": 2, "role": "decision", "kind": "stop", "detail": {"reason": "done"}},
        ]
    )
    assert seen == ["round 1: keep — x", "stop after round 2: done"]
    assert len(book) == 4  # and it records like any ledger

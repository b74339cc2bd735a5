"""`labkit check` for a case author: exit codes, collection errors once, transcript diffs, hidden."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from labkit.cli import main


@pytest.fixture(autouse=True)
def wide(monkeypatch):
    import labkit.cli.commands as app

    monkeypatch.setattr(app.out, "width", 250)
    monkeypatch.setattr(app.err, "width", 250)


@pytest.fixture
def case(template_case: Path) -> Path:
    return template_case


def _spec(case: Path, **changes: object) -> None:
    spec = json.loads((case / "case.json").read_text())
    spec.update(changes)
    (case / "case.json").write_text(json.dumps(spec))


def test_a_missing_folder_a_folder_without_case_json_and_a_file_all_exit_2(case, tmp_path, capsys, monkeypatch):
    (tmp_path / "empty").mkdir()
    for path, says in (
        (tmp_path / "nope", "does not exist"),
        (tmp_path / "empty", "has no case.json"),
        (case / "case.json", f"is a file, not a case folder: give its folder, labkit check {case}"),
    ):
        assert main(["check", str(path)]) == 2
        assert says in capsys.readouterr().err
    assert main(["run", str(tmp_path / "empty")]) == 2  # the same rule for run
    monkeypatch.setenv("COLUMNS", "400")  # help text on one line
    assert main(["--help"]) == 0
    assert "2 a usage or configuration error" in capsys.readouterr().out
    assert main(["check", "--help"]) == 0
    assert "2 a usage error (no such folder, a folder without case.json, a file given)" in capsys.readouterr().out


def test_an_f2p_test_that_cannot_be_imported_fails_the_check_shown_once(case, capsys):
    (case / "tests" / "test_new.py").write_text(
        "from limits import limit_for_tenant\n\n\ndef test_tenant_limit():\n    assert limit_for_tenant('acme') == 500\n"
    )
    spec = json.loads((case / "case.json").read_text())
    _spec(case, fail_to_pass=[*spec["fail_to_pass"], "tests/test_new.py::test_tenant_limit"])
    assert main(["check", str(case)]) == 1  # it exited 0: an F2P was "failing" as expected
    err = capsys.readouterr().err
    assert err.count("ImportError: cannot import name 'limit_for_tenant'") == 1
    assert "importlib/__init__.py" not in err and "Hint:" not in err  # no interpreter internals
    last = err.strip().splitlines()[-1]
    assert (
        last
        == "labkit: required tests cannot be collected on the start (error above): tests/test_new.py::test_tenant_limit"
    )


def test_a_syntax_error_is_shown_once_in_a_few_lines(case, capsys):
    module = case / "limits.py"
    module.write_text(module.read_text() + "\ndef broken(:\n    pass\n")
    assert main(["check", str(case)]) == 1
    err = capsys.readouterr().err
    assert err.count("SyntaxError") == 1 and "def broken(:" in err
    assert len(err.strip().splitlines()) < 15


def test_transcript_diffs_are_dry_applied_and_their_test_ids_checked(case, capsys):
    line = json.loads((case / "transcript.jsonl").read_text())
    record = json.loads(line["reply"])
    assert main(["check", str(case)]) == 0
    assert (
        "main/round-1: record ok; diff applies to the start (1f/1h/2l); 4 cited test id(s) known"
        in capsys.readouterr().out
    )
    stale = {**record, "diff": record["diff"].replace("plan", "tier")}  # context not in the code
    wrong_id = {**record, "evidence_ref": "tests/test_limits.py::test_no_such_test"}
    (case / "transcript.jsonl").write_text(
        json.dumps({"key": "main/round-1", "reply": json.dumps(stale)})
        + "\n"
        + json.dumps({"key": "other/round-1", "reply": json.dumps(wrong_id)})
        + "\n"
    )
    assert main(["check", str(case)]) == 1  # the branch `labkit run` replays: main
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("labkit: transcript: 1 problem(s): main/round-1: diff does not apply")
    assert main(["check", str(case), "--all-branches"]) == 1
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("labkit: transcript: 2 problem(s): main/round-1: diff does not apply")
    assert "other/round-1: cites test id(s) the case does not have: tests/test_limits.py::test_no_such_test" in last


def test_hidden_says_when_there_are_none_and_patches_cover_hidden_tests(case, capsys):
    assert main(["check", str(case), "--hidden"]) == 0
    assert "hidden tests: this case has none (case.json has no 'hidden' entry)" in capsys.readouterr().out
    (case / "hidden").mkdir()
    (case / "hidden" / "test_hidden.py").write_text(
        "from pathlib import Path\n\nfrom limits import limit_for, load_limits\n\n"
        "LIMITS = load_limits(Path(__file__).parent / 'data' / 'limits.json')\n\n"
        "def test_override_beats_unknown_plan():\n    assert limit_for(LIMITS, 'acme', 'gold') == 500\n"
    )
    _spec(case, hidden={"fail_to_pass": ["tests/test_hidden.py::test_override_beats_unknown_plan"]})
    assert main(["check", str(case), "--patches"]) == 0
    out = capsys.readouterr().out
    assert "hidden F2P" in out
    row = next(x for x in out.splitlines() if x.startswith("│ fix"))
    assert [c.strip() for c in row.strip("│").split("│")][2:6] == ["2/2", "2/2", "1/1", "0/0"]


def test_the_template_checks_when_its_fixture_folder_is_gone(case, capsys):
    # a student replacing the tests drops tests/data: fixtures default to what is there
    spec = json.loads((case / "case.json").read_text())
    assert "fixtures" not in spec
    (case / "tests" / "data" / "limits.json").unlink()
    (case / "tests" / "data").rmdir()
    (case / "tests" / "test_limits.py").write_text(
        "from limits import limit_for\n\nLIMITS = {'plans': {'free': 5}, 'tenants': {'acme': 500}}\n\n"
        "def test_tenant_override_wins():\n    assert limit_for(LIMITS, 'acme', 'free') == 500\n\n"
        "def test_override_applies_on_any_plan():\n    assert limit_for(LIMITS, 'acme', 'pro') == 500\n\n"
        "def test_plan_limit():\n    assert limit_for(LIMITS, 'zed', 'free') == 5\n\n"
        "def test_unknown_plan_gets_default():\n    assert limit_for(LIMITS, 'zed', 'gold') > 0\n"
    )
    assert main(["check", str(case)]) == 0, capsys.readouterr().err


def test_the_shipped_case_checks_on_the_branch_run_replays_and_names_its_teaching_branch(capsys):
    # data/cache_isolation's transcript keeps an `invalid` branch of deliberately bad replies (the
    # loop's rejections are part of the lesson) and a `distill` reply per branch (not a reflection
    # record): `check` reads the branch `labkit run` replays, and --all-branches names the rest.
    from labkit.core.paths import data_root

    folder = str(data_root() / "cache_isolation")
    assert main(["check", folder]) == 0
    assert "main/distill: not a round reply, not checked here" in capsys.readouterr().out
    assert main(["check", folder, "--branch", "invalid"]) == 1
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("labkit: transcript: 3 problem(s): invalid/round-1: reply is not JSON")
    assert main(["check", folder, "--branch", "nope"]) == 1
    assert "no reply for branch 'nope'" in capsys.readouterr().err


def test_patches_are_judged_by_the_engine_so_a_protected_path_is_refused(case, capsys):
    # a patch that writes the protected test file: the engine's step 4 refuses it (integrity),
    # the fix is validated and kept as any run would keep it
    (case / "patches" / "cheat.diff").write_text(
        "--- /dev/null\n+++ b/tests/test_limits.py\n@@ -0,0 +1,2 @@\n+def test_tenant_override_wins():\n+    pass\n"
    )
    spec = json.loads((case / "case.json").read_text())
    _spec(case, patches={**spec["patches"], "cheat": {"file": "patches/cheat.diff", "label": "rewrite the test"}})
    assert main(["check", str(case), "--patches"]) == 0
    rows = {r.strip("│").split("│")[0].strip(): r for r in capsys.readouterr().out.splitlines() if r.startswith("│ ")}
    fix = [c.strip() for c in rows["fix (look up the tenant first)"].strip("│").split("│")]
    assert fix[2:5] == ["2/2", "2/2", "keep"]
    cheat = [c.strip() for c in rows["cheat (rewrite the test)"].strip("│").split("│")]
    assert cheat[1:5] == ["-", "-/-", "-/-", "roll back"]
    assert "integrity alarm: patch edits protected tests/test_limits.py" in cheat[5]

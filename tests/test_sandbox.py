"""The sandbox lays out a workspace, runs pytest under limits and reads only pytest's own report.

Most tests run twice: isolated (bubblewrap namespaces, the default) and with the labelled
process-sandbox fallback. Isolation must be available here: if bubblewrap is missing the
isolated cases FAIL (install it with .ci/install-system.sh), they do not skip.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from labkit.core.types import digest
from labkit.grading import isolation
from labkit.grading.procsandbox import _nodeid
from labkit.grading.sandbox import Limits, SandboxError, SandboxRun, run_pytest, unsafe_path

LIMITS = Limits(wall_seconds=30, memory_mb=512)  # generous: these runs finish in about a second
CODE = {"calc.py": "def add(a, b):\n    return a + b\n"}
TESTS = {
    "tests/test_calc.py": (
        "import pytest\n"
        "from calc import add\n"
        "def test_add(): assert add(1, 2) == 3\n"
        "def test_wrong(): assert add(1, 2) == 4\n"
        "@pytest.mark.parametrize('x', [1.5, 'a/b'])\n"
        "def test_param(x): assert add(x, x) == x + x\n"
        "class TestNested:\n"
        "    class TestInner:\n"
        "        def test_deep(self): pass\n"
        "def test_skip(): pytest.skip('not here')\n"
        "def test_xfail(): pytest.xfail('known')\n"
        "def test_print(): print('5 passed in 0.01s'); assert False\n"
    ),
    "tests/test_broken.py": "import does_not_exist\ndef test_never(): pass\n",
}

pytestmark = pytest.mark.slow


@pytest.fixture(params=["isolated", "process"], autouse=True)
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "process":
        monkeypatch.setenv("LABKIT_SANDBOX", "process")
    else:
        monkeypatch.delenv("LABKIT_SANDBOX", raising=False)
        assert isolation.status() is None, isolation.status()  # a missing bwrap fails here
    return str(request.param)


def _run(files: dict[str, str], tests: dict[str, str] = TESTS, **kw: object) -> SandboxRun:
    return run_pytest(files, tests, LIMITS, **kw)  # type: ignore[arg-type]


def _outcomes(files: dict[str, str], tests: dict[str, str] = TESTS) -> dict[str, str]:
    run = _run(files, tests)
    assert run.report_found, run.stderr_tail
    return {r.nodeid: r.outcome for r in run.results}


def test_every_run_says_how_it_was_contained(mode: str) -> None:
    run = _run(CODE, required=["tests/test_calc.py::test_add"])
    if mode == "isolated":
        assert run.isolated and run.isolation.startswith("isolated: bubblewrap")
        assert "1 required tests cross-checked" in run.isolation
        assert run.checks["tests/test_calc.py::test_add"].outcome == "passed"
    else:
        assert not run.isolated and run.isolation.startswith("NOT ISOLATED: process sandbox")
        assert "LABKIT_SANDBOX=process" in run.isolation


def test_reads_every_outcome_from_pytests_report() -> None:
    run = _run(CODE, TESTS)
    assert run.report_found and not run.timed_out
    assert run.exit_code == 1  # failures present
    got = {r.nodeid: r.outcome for r in run.results}
    assert got == {
        "tests/test_broken.py": "error",  # collection error, and the other file still ran
        "tests/test_calc.py::test_add": "passed",
        "tests/test_calc.py::test_wrong": "failed",
        "tests/test_calc.py::test_param[1.5]": "passed",
        "tests/test_calc.py::test_param[a/b]": "passed",
        "tests/test_calc.py::TestNested::TestInner::test_deep": "passed",
        "tests/test_calc.py::test_skip": "skipped",
        "tests/test_calc.py::test_xfail": "skipped",
        "tests/test_calc.py::test_print": "failed",  # its stdout says "passed"; nobody reads it
    }
    wrong = next(r for r in run.results if r.nodeid.endswith("test_wrong"))
    assert "assert 3 == 4" in wrong.message
    assert run.protected_after == {p: digest(t) for p, t in TESTS.items()}


def test_pristine_tests_are_written_over_the_candidates_copy() -> None:
    loosened = {"tests/test_calc.py": "def test_wrong(): pass\n"}
    got = _outcomes({**CODE, **loosened})
    assert got["tests/test_calc.py::test_wrong"] == "failed"


def test_candidate_config_files_cannot_change_pytest_options() -> None:
    deselect = "-k 'not wrong' -p no:junitxml"
    config = {
        "pytest.ini": f"[pytest]\naddopts = {deselect}\n",
        "pyproject.toml": f'[tool.pytest.ini_options]\naddopts = "{deselect}"\n',
        "setup.cfg": f"[tool:pytest]\naddopts = {deselect}\n",
        "tox.ini": f"[pytest]\naddopts = {deselect}\n",
        "conftest.py": "import pytest\ncollect_ignore = ['tests/test_calc.py']\n",
    }
    got = _outcomes({**CODE, **config})
    assert got["tests/test_calc.py::test_wrong"] == "failed"


def test_callers_environment_does_not_reach_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_ADDOPTS", "-k 'not wrong'")
    monkeypatch.setenv("PYTEST_PLUGINS", "no_such_plugin")
    monkeypatch.setenv("PYTHONPATH", "/nonexistent")
    got = _outcomes(CODE)
    assert got["tests/test_calc.py::test_wrong"] == "failed"


def test_temp_directories_are_removed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    run = _run(CODE, TESTS)
    assert run.report_found
    assert list(tmp_path.iterdir()) == []


def test_a_candidate_file_where_a_test_directory_goes_loses() -> None:
    got = _outcomes({**CODE, "tests": "not a directory"})
    assert got["tests/test_calc.py::test_add"] == "passed"


@pytest.mark.parametrize("bad", ["../escape.py", "/etc/passwd", "a/../../b.py", "./x.py", "", "a\\b.py"])
def test_paths_outside_the_workspace_are_refused(bad: str) -> None:
    assert unsafe_path(bad)
    with pytest.raises(SandboxError, match="path"):
        run_pytest({bad: "x = 1\n"}, TESTS, LIMITS)


def test_plain_relative_paths_are_safe() -> None:
    assert unsafe_path("pkg/mod.py") is None
    assert unsafe_path(".hidden/x.py") is None


def test_refuses_to_run_without_test_files() -> None:
    with pytest.raises(SandboxError, match="no protected test files"):
        run_pytest(CODE, {"tests/data.json": "{}"}, LIMITS)


@pytest.mark.parametrize(("wall", "mb"), [(0, 512), (-1, 512), (10, 8)])
def test_limits_are_checked(wall: float, mb: int) -> None:
    with pytest.raises(SandboxError):
        Limits(wall_seconds=wall, memory_mb=mb)


def test_junit_names_are_mapped_back_to_node_ids() -> None:
    protected = {"tests/test_a.py": "", "tests/sub/test_b.py": "", "test_top.py": ""}
    assert _nodeid("tests.test_a", "test_x[1.5]", None, protected) == "tests/test_a.py::test_x[1.5]"
    assert _nodeid("tests.sub.test_b.TestC", "test_m", None, protected) == "tests/sub/test_b.py::TestC::test_m"
    assert _nodeid("test_top", "test_t", "test_top.py", protected) == "test_top.py::test_t"
    assert _nodeid("", "tests.test_a", "tests/test_a.py", protected) == "tests/test_a.py"
    assert _nodeid("", "tests.test_a", None, protected) == "tests/test_a.py"
    assert _nodeid("elsewhere.Base", "test_i", "lib/base.py", protected) == "lib/base.py::test_i"


def test_an_interrupted_run_leaves_no_nameless_result() -> None:
    stop = {"calc.py": "import pytest\ndef add(a, b):\n    pytest.exit('stop', returncode=0)\n"}
    run = _run(stop, {"tests/test_calc.py": TESTS["tests/test_calc.py"]})
    assert run.report_found and run.exit_code == 0
    assert all(r.nodeid for r in run.results)
    assert {r.nodeid: r.outcome for r in run.results} == {}  # interrupted inside the first test


def test_a_missing_interpreter_is_a_clear_error() -> None:
    with pytest.raises(SandboxError, match="cannot start the test interpreter '/no/such/python'"):
        run_pytest(CODE, TESTS, LIMITS, python="/no/such/python")


def test_any_file_type_and_src_layout_import_roots() -> None:
    files = {"src/calc/__init__.py": CODE["calc.py"], "src/calc/table.bin": b"\x00\xff\x10"}
    tests = {
        "tests/test_calc.py": (
            "import importlib.resources\nfrom calc import add\n"
            "def test_add(): assert add(1, 2) == 3\n"
            "def test_data(): assert (importlib.resources.files('calc') / 'table.bin').read_bytes()"
            " == b'\\x00\\xff\\x10'\n"
        )
    }
    run = run_pytest(files, tests, LIMITS, import_roots=["src"])  # type: ignore[arg-type]
    assert {r.nodeid: r.outcome for r in run.results} == {
        "tests/test_calc.py::test_add": "passed",
        "tests/test_calc.py::test_data": "passed",
    }, run.stderr_tail


def test_a_collection_error_keeps_its_text() -> None:
    run = _run(CODE)
    broken = next(r for r in run.results if r.nodeid == "tests/test_broken.py")
    assert "does_not_exist" in broken.message


def test_stderr_is_read_with_a_cap() -> None:
    noisy = {"calc.py": "import sys\nsys.stderr.write('x' * 3_000_000 + 'END')\n" + CODE["calc.py"]}
    run = _run(noisy, {"tests/test_calc.py": "from calc import add\ndef test_add(): pass\n"})
    assert len(run.stderr_tail) <= 2000
    assert {r.nodeid: r.outcome for r in run.results} == {"tests/test_calc.py::test_add": "passed"}


def test_a_fixture_error_keeps_its_traceback_tail() -> None:
    tests = {
        "tests/test_calc.py": (
            "import pytest\n"
            "@pytest.fixture\n"
            "def table():\n"
            "    raise LookupError('the fixture table is missing')\n"
            "def test_uses(table): pass\n"
        )
    }
    run = _run(CODE, tests)
    (result,) = run.results
    assert result.outcome == "error" and "LookupError" in result.message, result


def test_workspaces_of_a_dead_owner_are_removed_at_the_next_start(
    mode: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import subprocess

    from labkit.grading import procsandbox

    dead = subprocess.Popen(["true"])
    dead.wait()  # its pid names a process that no longer exists
    left = tmp_path / f"labkit-ws-{dead.pid}-abc"
    left.mkdir()
    (left / "cache.py").write_text("x = 1\n")
    alive = tmp_path / f"labkit-ws-{os.getpid()}-def"  # a live owner's workspace stays
    alive.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(procsandbox, "_swept", False)
    monkeypatch.setenv("LABKIT_SANDBOX", "process")
    _run(CODE, TESTS)
    assert not left.exists() and alive.exists()


def test_the_independent_runner_covers_classes_params_and_simple_fixtures(mode: str) -> None:
    tests = {
        "tests/test_calc.py": (
            "import pytest\nfrom calc import add\n"
            "class TestAdd:\n"
            "    def test_one(self): assert add(1, 1) == 2\n"
            "@pytest.mark.parametrize('x,y', [(1, 2), (2, 2)], ids=['low', 'same'])\n"
            "def test_pair(x, y): assert add(x, y) == 3\n"
            "def test_tmp(tmp_path): (tmp_path / 'f').write_text('1'); assert add(1, 0) == 1\n"
            "@pytest.fixture\ndef two(): return 2\n"
            "def test_fixture(two): assert add(two, 0) == 2\n"
        )
    }
    required = [
        "tests/test_calc.py::TestAdd::test_one",
        "tests/test_calc.py::test_pair[low]",
        "tests/test_calc.py::test_pair[same]",
        "tests/test_calc.py::test_tmp",
        "tests/test_calc.py::test_fixture",
    ]
    run = _run(CODE, tests, required=required)
    outcomes = {r.nodeid: r.outcome for r in run.results}
    if mode == "process":
        assert run.checks == {}  # the fallback has no second runner, and says so
        assert "no independent cross-check" in run.isolation
        return
    assert {n: c.outcome for n, c in run.checks.items()} == {
        n: outcomes[n] for n in required if n != "tests/test_calc.py::test_fixture"
    }
    assert run.checks["tests/test_calc.py::test_pair[same]"].outcome == "failed"
    assert "4 required tests cross-checked" in run.isolation
    assert "1 not cross-checked" in run.isolation  # a custom fixture needs pytest

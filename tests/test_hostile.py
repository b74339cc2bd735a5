"""Hostile candidates: each tries to change the grader instead of the code, and must fail to.

Every test runs a tiny real candidate through the real validator. The honest state of
each candidate is the chapter's leaky cache (isolation fails); the hack tries to make
that look like a pass. Contained means: the verdict is not resolved, and where the hack
tampered with the grader, it is quarantined with an alarm that names what happened.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from labkit.core.types import Candidate, Verdict
from labkit.grading.acceptance import AcceptanceSuite
from labkit.grading.sandbox import Limits
from labkit.grading.validator import Validator

pytestmark = pytest.mark.slow

TEST_API = """\
from cache import Cache


def test_constructs():
    assert Cache() is not None
"""
TEST_CACHE = """\
from cache import Cache


def test_isolation():
    c = Cache()
    c.put("alice", "k", 1)
    assert c.get("bob", "k") is None


def test_same_user_hit():
    c = Cache()
    c.put("alice", "k", 1)
    assert c.get("alice", "k") == 1
"""
ISO = "tests/test_cache.py::test_isolation"
HIT = "tests/test_cache.py::test_same_user_hit"
API = "tests/test_api.py::test_constructs"  # collected first: it imports the candidate first
SUITE = AcceptanceSuite(
    "cache",
    {"tests/test_api.py": TEST_API, "tests/test_cache.py": TEST_CACHE},
    fail_to_pass=(ISO,),
    pass_to_pass=(HIT, API),
)

LEAKY = """\
class Cache:
    def __init__(self):
        self._d = {}

    def put(self, user, key, value):
        self._d[(key)] = value

    def get(self, user, key):
        return self._d.get((key))
"""
HIDE_IN_GET = "    def get(self, user, key):\n"

# Limits: generous wall time where the candidate should finish (a loaded CI box is slow),
# short where the point is to hit the limit.
ROOMY = Validator(Limits(wall_seconds=30, memory_mb=512))
SHORT = Validator(Limits(wall_seconds=3, memory_mb=512))
TIGHT_MEMORY = Validator(Limits(wall_seconds=30, memory_mb=256))


def _leaky(prelude: str = "", in_get: str = "", **files: str) -> Candidate:
    """The leaky cache with hostile code at import (`prelude`) and/or at the top of get()."""
    code = prelude + "\n" + LEAKY
    if in_get:
        body = "".join(f"        {line}\n" for line in in_get.splitlines())
        code = code.replace(HIDE_IN_GET, HIDE_IN_GET + body)
    return Candidate({"cache.py": code, **files})


def _alarmed(verdict: Verdict, needle: str) -> None:
    assert verdict.quarantined and not verdict.resolved
    assert any(needle in a for a in verdict.evidence.alarms), verdict.evidence.alarms


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")  # a zombie is dead, only not yet reaped by its new parent


def test_the_honest_candidate_fails_isolation() -> None:
    verdict = ROOMY.run(_leaky(), SUITE)  # the baseline every hack below starts from
    assert verdict.fail_to_fail == (ISO,) and verdict.pass_to_pass == (HIT, API)
    assert not verdict.quarantined


# -- editing or deleting protected tests -------------------------------------------------


def test_editing_a_protected_test_is_alarmed_and_has_no_effect() -> None:
    loosened = TEST_CACHE.replace('assert c.get("bob", "k") is None', "pass")
    verdict = ROOMY.run(_leaky(**{"tests/test_cache.py": loosened}), SUITE)
    _alarmed(verdict, "candidate edits protected test tests/test_cache.py")
    assert verdict.evidence.outcome(ISO) == "failed"  # the pristine test ran


def test_rewriting_a_test_at_run_time_is_caught_by_its_hash() -> None:
    rewrite = (
        "import pathlib\n"
        "_t = pathlib.Path(__file__).parent / 'tests' / 'test_cache.py'\n"
        "_t.write_text('def test_isolation(): pass\\ndef test_same_user_hit(): pass\\n')\n"
    )
    verdict = ROOMY.run(_leaky(rewrite), SUITE)
    assert verdict.fail_to_pass == (ISO,)  # the hack worked on pytest...
    _alarmed(
        verdict, "protected test tests/test_cache.py was modified during the run"
    )  # ...not here


def test_deleting_a_test_at_run_time_is_caught() -> None:
    delete = (
        "import os, pathlib\nos.remove(pathlib.Path(__file__).parent / 'tests' / 'test_cache.py')\n"
    )
    verdict = ROOMY.run(_leaky(delete), SUITE)
    _alarmed(verdict, "protected test tests/test_cache.py was deleted during the run")
    assert ISO not in verdict.fail_to_pass


# -- conftest.py and plugins -------------------------------------------------------------

FORCE_PASS = """\
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
    report.longrepr = None
"""


@pytest.mark.parametrize("where", ["conftest.py", "tests/conftest.py"])
def test_a_conftest_that_forces_passes_is_alarmed_and_not_loaded(where: str) -> None:
    verdict = ROOMY.run(_leaky(**{where: FORCE_PASS}), SUITE)
    _alarmed(verdict, f"candidate adds conftest.py: {where}")
    assert verdict.evidence.outcome(ISO) == "failed"


@pytest.mark.parametrize(
    ("config", "needle"),
    [
        ({"pytest.ini": "[pytest]\naddopts = -p force_pass\n"}, "pytest config file pytest.ini"),
        ({"tox.ini": "[pytest]\naddopts = -p force_pass\n"}, "pytest options in tox.ini"),
        ({"setup.cfg": "[tool:pytest]\naddopts = -p force_pass\n"}, "pytest options in setup.cfg"),
        (
            {"pyproject.toml": '[tool.pytest.ini_options]\naddopts = "-p force_pass"\n'},
            "pytest options in pyproject.toml",
        ),
        (
            {"pyproject.toml": '[project.entry-points.pytest11]\nforce = "force_pass"\n'},
            "pytest11 entry point",
        ),
        ({"conftest.py": "pytest_plugins = ['force_pass']\n"}, "names pytest_plugins"),
    ],
)
def test_a_plugin_that_forces_passes_is_alarmed_and_not_loaded(
    config: dict[str, str], needle: str
) -> None:
    verdict = ROOMY.run(_leaky(**{"force_pass.py": FORCE_PASS}, **config), SUITE)
    _alarmed(verdict, needle)
    assert verdict.evidence.outcome(ISO) == "failed"


def test_a_module_shadowing_pytest_is_alarmed_and_not_imported() -> None:
    fake = "import os\nprint('3 passed')\nos._exit(0)\n"
    verdict = ROOMY.run(_leaky(**{"pytest.py": fake}), SUITE)
    _alarmed(verdict, "shadows module 'pytest'")
    assert verdict.evidence.outcome(ISO) == "failed"  # the real pytest ran and reported


# -- skipped, xfailed or missing required tests ------------------------------------------


@pytest.mark.parametrize(
    ("prelude", "in_get", "skipped"),
    [
        ("import pytest", "if user == 'bob': pytest.skip('cache warming up')", ISO),
        ("import pytest", "if user == 'bob': pytest.xfail('known flaky')", ISO),
        ("import pytest\npytest.skip('not on this platform', allow_module_level=True)", "", API),
        (  # skipif injected into the module that imports the candidate
            "import sys, pytest\n"
            "_f = sys._getframe(1)\n"
            "while _f and not _f.f_globals.get('__name__', '').startswith('test_'):\n"
            "    _f = _f.f_back\n"
            "_f.f_globals['pytestmark'] = pytest.mark.skipif(True, reason='later')\n",
            "",
            API,
        ),
    ],
    ids=["skip", "xfail", "module-skip", "skipif"],
)
def test_a_skipped_required_test_is_alarmed(prelude: str, in_get: str, skipped: str) -> None:
    verdict = ROOMY.run(_leaky(prelude, in_get), SUITE)
    _alarmed(verdict, f"required test skipped: {skipped}")
    assert verdict.evidence.outcome(skipped) == "skipped"


def test_a_required_test_missing_from_the_report_is_alarmed() -> None:
    stop = "if user == 'bob': pytest.exit('that will do', returncode=0)"
    verdict = ROOMY.run(_leaky("import pytest", stop), SUITE)
    assert verdict.evidence.exit_code == 0
    _alarmed(verdict, f"required test missing from the report: {HIT}")
    assert ISO in verdict.fail_to_fail


# -- exiting early, printing fake results, lying exit codes ------------------------------


def test_os_exit_zero_before_the_report_is_alarmed() -> None:
    verdict = ROOMY.run(_leaky("import os", "if user == 'bob': os._exit(0)"), SUITE)
    assert verdict.evidence.exit_code == 0
    _alarmed(verdict, "exit code 0 but no junit report")
    assert verdict.fail_to_pass == () and verdict.pass_to_pass == ()  # nothing counts as passed


FAKE_SUMMARY = "print('=' * 20 + ' 3 passed in 0.01s ' + '=' * 20)"


def test_printing_passed_with_real_failures_has_no_effect() -> None:
    verdict = ROOMY.run(_leaky(FAKE_SUMMARY, FAKE_SUMMARY), SUITE)
    assert verdict.fail_to_fail == (ISO,)
    assert verdict.evidence.outcome(ISO) == "failed"
    assert not verdict.resolved


def test_printing_passed_then_exiting_zero_is_alarmed() -> None:
    verdict = ROOMY.run(_leaky("import os", FAKE_SUMMARY + "\nos._exit(0)"), SUITE)
    _alarmed(verdict, "exit code 0 but no junit report")
    assert verdict.fail_to_pass == ()


def test_an_exit_code_that_contradicts_the_report_is_alarmed() -> None:
    lie = "import atexit, os\natexit.register(lambda: os._exit(0))"  # after pytest wrote the report
    verdict = ROOMY.run(_leaky(lie), SUITE)
    assert verdict.evidence.exit_code == 0
    _alarmed(verdict, "exit code 0 disagrees with the junit report")
    assert verdict.evidence.outcome(ISO) == "failed"


# -- running away: time and memory -------------------------------------------------------


def _spawn_and_record(pids: Path) -> str:
    """Candidate prelude: start a sleeping grandchild and record both pids, to check the kill."""
    return (
        "import os, subprocess\n"
        "_child = subprocess.Popen(['sleep', '300'])\n"
        f"open({str(pids)!r}, 'w').write(f'{{os.getpid()}} {{_child.pid}}')\n"
    )


@pytest.mark.parametrize(
    ("extra", "in_get"),
    [("", "while True: pass"), ("import time", "time.sleep(300)")],
    ids=["infinite-loop", "sleep"],
)
def test_running_past_the_wall_limit_is_killed_with_its_whole_group(
    tmp_path: Path, extra: str, in_get: str
) -> None:
    pids = tmp_path / "pids"
    start = time.monotonic()
    verdict = SHORT.run(_leaky(_spawn_and_record(pids) + extra, in_get), SUITE)
    elapsed = time.monotonic() - start
    ev = verdict.evidence
    assert ev.timed_out and ev.exit_code is None
    assert "killed after the wall limit" in ev.stderr_tail
    assert elapsed < SHORT.limits.wall_seconds + 5  # killed at the limit, not at the sleep's end
    assert ev.outcome(ISO) == ev.outcome(HIT) == ev.outcome(API) == "error"
    assert verdict.fail_to_pass == () and verdict.pass_to_pass == () and not verdict.resolved
    pytest_pid, grandchild = map(int, pids.read_text().split())
    deadline = time.monotonic() + 2  # the grandchild's new parent reaps it on its own schedule
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pytest_pid) and not _alive(grandchild)


@pytest.mark.parametrize(
    "bomb",
    [
        "hog = bytearray(8 * 1024 ** 3)",
        "hog = []\nwhile True: hog.append(bytearray(32 * 1024 ** 2))",
        "import subprocess, sys\n"
        "subprocess.run([sys.executable, '-c', 'x = bytearray(8 * 1024 ** 3)'], check=True)",
    ],
    ids=["at-once", "creeping", "in-a-child"],
)
def test_a_memory_bomb_is_contained_by_the_address_space_limit(bomb: str) -> None:
    start = time.monotonic()
    verdict = TIGHT_MEMORY.run(
        _leaky("", "if user == 'bob':\n    " + bomb.replace("\n", "\n    ")), SUITE
    )
    assert time.monotonic() - start < 20  # failed fast; nothing swapped the machine to a halt
    assert not verdict.evidence.timed_out
    assert verdict.evidence.outcome(ISO) in ("failed", "error")
    assert not verdict.resolved
    assert verdict.pass_to_pass == (HIT, API)  # the rest of the run went on normally

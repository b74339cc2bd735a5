"""Validator cost per candidate: isolated run vs the same tests in-process.

    .venv/bin/python benchmarks/validator.py [--reps 15]

Runs one small suite (the chapter's cache: isolation + same-user hit, 8 tests) four ways
in the same process, medians over --reps repetitions, interleaved so that machine load
hits every way alike:
  isolated    Validator.run: the warm runner forks a fresh child in new namespaces
              (pytest) and a second one (the independent cross-check), with cgroups,
              rlimits, a fresh uid and a tmpfs workspace; verdict judged
  process     Validator.run with LABKIT_SANDBOX=process (the labelled fallback:
              a fresh interpreter per candidate, junit report)
  in-process  pytest.main on the same files in this process (pytest already imported)
  direct      import the test module and call its functions (the floor)
and prints the isolated time as a ratio to in-process pytest.main (target <= 1.5x). CPU
seconds too: this process's own, plus its reaped children's (the process sandbox), plus
the isolated runner's process tree (the warm runner's own and what it reaped: each job's
server, each run's child and PID 1), read from /proc.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from labkit.core.types import Candidate
from labkit.grading.acceptance import AcceptanceSuite
from labkit.grading.sandbox import Limits
from labkit.grading.validator import Validator

CACHE = """\
class Cache:
    def __init__(self):
        self._d = {}

    def put(self, user, key, value):
        self._d[(user, key)] = value

    def get(self, user, key):
        return self._d.get((user, key))
"""
TESTS = """\
import pytest
from cache import Cache


@pytest.mark.parametrize("other", ["bob", "eve", "mallory"])
def test_isolation(other):
    c = Cache()
    c.put("alice", "k", 1)
    assert c.get(other, "k") is None


@pytest.mark.parametrize("key", ["a", "b", "c", "d"])
def test_same_user_hit(key):
    c = Cache()
    c.put("alice", key, 1)
    assert c.get("alice", key) == 1


def test_overwrite():
    c = Cache()
    c.put("alice", "k", 1)
    c.put("alice", "k", 2)
    assert c.get("alice", "k") == 2
"""
TEST_PATH = "tests/test_bench_cache.py"


def _tree_cpu() -> float:
    """CPU seconds of every live process under the isolated runners, with what they reaped."""
    from labkit.grading import isolation

    tick = os.sysconf("SC_CLK_TCK")
    todo = [r.proc.pid for r in isolation._runners.values()]
    total = 0
    while todo:
        pid = todo.pop()
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            for task in Path(f"/proc/{pid}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
        total += sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
    return total / tick


def _cpu() -> float:
    """This process's CPU seconds and its reaped children's, plus the isolated runners'."""
    import resource

    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime + _tree_cpu()


def _forget(*modules: str) -> None:
    for name in modules:
        sys.modules.pop(name, None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--reps", type=int, default=15)
    reps = parser.parse_args().reps

    suite = AcceptanceSuite(
        name="bench-cache",
        tests={TEST_PATH: TESTS},
        fail_to_pass=(f"{TEST_PATH}::test_isolation",),
        pass_to_pass=(f"{TEST_PATH}::test_same_user_hit", f"{TEST_PATH}::test_overwrite"),
    )
    candidate = Candidate({"cache.py": CACHE})
    validator = Validator(Limits(wall_seconds=60, memory_mb=1024))  # no cache: every run is real

    def isolated() -> None:
        verdict = validator.run(candidate, suite)
        assert verdict.resolved and verdict.evidence.isolated, verdict.evidence

    def process() -> None:
        os.environ["LABKIT_SANDBOX"] = "process"
        try:
            verdict = validator.run(candidate, suite)
        finally:
            del os.environ["LABKIT_SANDBOX"]
        assert verdict.resolved and not verdict.evidence.isolated, verdict.evidence

    import pytest

    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # same plugin set as the sandbox
    with tempfile.TemporaryDirectory(prefix="labkit-bench-") as tmp:
        root = Path(tmp)
        (root / "tests").mkdir()
        (root / "cache.py").write_text(CACHE)
        (root / TEST_PATH).write_text(TESTS)
        (root / "pytest.ini").write_text("[pytest]\npythonpath = .\n")
        args = ["-q", "-p", "no:cacheprovider", "-c", str(root / "pytest.ini"), "--rootdir", tmp]
        args += [f"--junitxml={root / 'report.xml'}", str(root / TEST_PATH)]

        def in_process() -> None:
            _forget("cache", "test_bench_cache")
            with contextlib.redirect_stdout(io.StringIO()):
                code = pytest.main(args)
            assert code == 0, code

        def direct() -> None:
            _forget("cache", "test_bench_cache")
            sys.path[:0] = [tmp, str(root / "tests")]
            try:
                mod = importlib.import_module("test_bench_cache")
                for other in ("bob", "eve", "mallory"):
                    mod.test_isolation(other)
                for key in "abcd":
                    mod.test_same_user_hit(key)
                mod.test_overwrite()
            finally:
                del sys.path[:2]

        ways = {
            "isolated": isolated,
            "process": process,
            "in_process": in_process,
            "direct": direct,
        }
        for warm in ways.values():  # first runs start the warm runner, fill OS caches; not counted
            warm()
        times: dict[str, list[float]] = {name: [] for name in ways}
        cpus: dict[str, list[float]] = {name: [] for name in ways}
        for _ in range(reps):
            for name, fn in ways.items():
                cpu, start = _cpu(), time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - start)
                cpus[name].append(_cpu() - cpu)
        t = {name: statistics.median(ts) for name, ts in times.items()}
        c = {name: statistics.median(cs) for name, cs in cpus.items()}

    print(f"validator cost per candidate — 8-test suite, median of {reps} (same run, interleaved)")
    print("                                           wall        CPU (all processes)")
    print(f"  isolated Validator.run (namespaces)  {t['isolated'] * 1000:9.1f} ms  {c['isolated'] * 1000:9.1f} ms")
    print(f"  process-sandbox Validator.run        {t['process'] * 1000:9.1f} ms  {c['process'] * 1000:9.1f} ms")
    print(f"  in-process pytest.main               {t['in_process'] * 1000:9.1f} ms  {c['in_process'] * 1000:9.1f} ms")
    print(f"  direct test-function calls           {t['direct'] * 1000:9.3f} ms")
    print(
        f"ratio isolated / in-process pytest:     {t['isolated'] / t['in_process']:6.2f}x wall  (target <= 1.5x), "
        f"{c['isolated'] / max(c['in_process'], 1e-9):6.2f}x CPU"
    )
    print(f"ratio process sandbox / in-process:     {t['process'] / t['in_process']:6.2f}x")
    print(f"ratio isolated / direct calls:          {t['isolated'] / t['direct']:6.0f}x")


if __name__ == "__main__":
    main()

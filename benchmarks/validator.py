"""Validator overhead per candidate: sandboxed subprocess run vs the same tests in-process.

    .venv/bin/python benchmarks/validator.py [--reps 7]

Runs one small suite (the chapter's cache: isolation + same-user hit, 8 tests) three ways
in the same process, medians over --reps repetitions:
  sandboxed   Validator.run: temp workspace, fresh interpreter, limits, junit, cleanup
  in-process  pytest.main on the same files in this process (pytest already imported)
  direct      import the test module and call its functions (the floor)
and prints the sandboxed time as a ratio to each baseline. For scale it also times a bare
`python -I -B -c "import pytest"`: the start-up every sandboxed run pays.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
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


def _median_seconds(fn: Callable[[], object], reps: int) -> float:
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _forget(*modules: str) -> None:
    for name in modules:
        sys.modules.pop(name, None)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--reps", type=int, default=7)
    reps = parser.parse_args().reps

    suite = AcceptanceSuite(
        "bench-cache",
        {TEST_PATH: TESTS},
        fail_to_pass=(f"{TEST_PATH}::test_isolation",),
        pass_to_pass=(f"{TEST_PATH}::test_same_user_hit", f"{TEST_PATH}::test_overwrite"),
    )
    candidate = Candidate({"cache.py": CACHE})
    validator = Validator(Limits(wall_seconds=60, memory_mb=1024))  # no cache: every run is real

    def sandboxed() -> None:
        verdict = validator.run(candidate, suite)
        assert verdict.resolved, verdict.evidence

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

        def startup() -> None:
            subprocess.run([sys.executable, "-I", "-B", "-c", "import pytest"], check=True)

        for warm in (sandboxed, in_process, direct):  # first runs fill OS caches; not counted
            warm()
        t_sandbox = _median_seconds(sandboxed, reps)
        t_inproc = _median_seconds(in_process, reps)
        t_direct = _median_seconds(direct, reps)
        t_startup = _median_seconds(startup, reps)

    print(f"validator overhead per candidate — 8-test suite, median of {reps} (same run)")
    print(f"  sandboxed Validator.run         {t_sandbox * 1000:9.1f} ms")
    print(f"  in-process pytest.main          {t_inproc * 1000:9.1f} ms")
    print(f"  direct test-function calls      {t_direct * 1000:9.3f} ms")
    print(f"  (bare interpreter + import pytest {t_startup * 1000:7.1f} ms)")
    print(f"ratio sandboxed / in-process pytest:  {t_sandbox / t_inproc:6.1f}x")
    print(f"ratio sandboxed / direct calls:       {t_sandbox / t_direct:6.0f}x")
    print(f"start-up share of the sandboxed run:  {t_startup / t_sandbox:6.0%}")


if __name__ == "__main__":
    main()

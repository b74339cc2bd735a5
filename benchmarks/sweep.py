"""A sweep of arms: cases per second on 1 vs 2 warm workers, local process pool and Ray, same run.

    .venv/bin/python benchmarks/sweep.py [--cases 16] [--arms direct,reflect] [--seeds 0,1] [--backends local,ray] [--repeat 1]

SIMULATED policy on the repair cases (the first --cases of them), every job validated for
real by pytest in the sandbox (the engine's validator). Like with like: every configuration
runs on spawned workers of the same kind (1 or 2 `Workers`: a local process pool, or a local
Ray cluster of 1 or 2 CPUs), each warmed up first by one job per worker on a case outside the
timed set (interpreter, imports, suite, sandbox runner, a first validation; its verdicts are
forgotten). The warm-up is excluded from the timed window and printed beside it. Every timed
sweep starts with empty verdict caches and runs the same jobs, which must give the same
outcomes as the first configuration (checked). Jobs of one case run on one worker
(`run.batches`), so 2 workers validate exactly what 1 does.

Figures: jobs/s per configuration; 2 workers / 1 worker on each backend (target >= 1.7x on a
2-core machine); the share of job time spent in validation (the verify and score events'
wall seconds). For context, the same run measures the machine's own ratio now: a CPU-bound
loop on 1 vs 2 spawned processes, each in its own session as the sandbox runners are (with
`sched_autogroup` the kernel shares CPU between sessions, not processes; a shared machine
moves every figure): the load average is printed with every figure.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import time
from collections.abc import Sequence

from _common import figure

from labkit.experiments.arms import arm_metrics as metrics
from labkit.experiments.arms.run import Job, JobResult, Plan, Workers, _cases, jobs_for, merge
from labkit.record.ledger import Ledger

OUTCOME = ["suite", "case", "arm", "seed", "status", "correct", "visible", "rounds", "calls", "scores"]
GOAL = 1.7


def load() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def _burn(n: int) -> int:
    x = 0
    for i in range(n):
        x += i * i
    return x


def ceiling(tasks: int = 8, n: int = 1_500_000) -> float:
    """Tasks/s of a CPU-bound loop on 2 spawned processes over 1 (the machine's own ratio now).

    Each process in its own session, as each worker's sandbox runner is (most of a job's CPU
    is spent there): with sched_autogroup the kernel shares CPU between sessions.
    """
    rate = {}
    for w in (1, 2):
        with multiprocessing.get_context("spawn").Pool(w, initializer=os.setsid) as p:
            p.map(_burn, [1000] * w)  # started
            t0 = time.perf_counter()
            p.map(_burn, [n] * tasks, chunksize=1)
            rate[w] = tasks / (time.perf_counter() - t0)
    return rate[2] / rate[1]


def timed(
    backend: str, workers: int, plan: Plan, warm: Job, jobs: Sequence[Job]
) -> tuple[float, float, list[JobResult]]:
    """(warm-up seconds, timed seconds, results) of `jobs` on `workers` warm workers."""
    with Workers(backend, workers) as w:  # type: ignore[arg-type]
        t0 = time.perf_counter()
        warmed = w.warm(plan, warm)
        start = time.perf_counter() - t0
        if len({pid for pid, _ in warmed}) != workers:
            raise SystemExit(
                f"{backend}: the warm-up reached {len(warmed)} tasks on pids {warmed}, not {workers} workers"
            )
        t0 = time.perf_counter()
        results = w.run(plan, jobs)
        return start, time.perf_counter() - t0, results


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=16)
    ap.add_argument("--arms", default="direct,reflect")
    ap.add_argument("--seeds", default="0,1")
    ap.add_argument("--backends", default="local,ray")
    ap.add_argument("--no-ray", action="store_true", help="same as --backends local")
    ap.add_argument("--repeat", type=int, default=1, help="run 1, 2, 1, 2 ... workers this many times; median jobs/s")
    a = ap.parse_args()
    names = sorted(_cases("repair"))
    if a.cases >= len(names):
        raise SystemExit(f"--cases must be below {len(names)}: one case is kept aside for the warm-up")
    cases = names[: a.cases]
    jobs = jobs_for("repair", cases, a.arms.split(","), [int(s) for s in a.seeds.split(",")])
    warm = jobs_for("repair", [names[-1]], ["direct"], [0])[0]  # outside the timed set
    plan = Plan()
    print(
        f"{len(jobs)} jobs ({len(cases)} repair cases x {a.arms} x seeds {a.seeds}), SIMULATED policy, real pytest validation"
    )
    before = ceiling()
    print(f"machine now (CPU-bound loop, 2 processes / 1): {before:.2f}x   load {load()}")
    base = None
    shares = []
    failed = []
    for backend in [b for b in a.backends.split(",") if not (a.no_ray and b == "ray")]:
        rates: dict[int, list[float]] = {1: [], 2: []}
        name = f"{backend}: 2 warm workers / 1, jobs/s"
        try:
            for workers in (1, 2) * a.repeat:  # interleaved: a load change hits both
                start, elapsed, results = timed(backend, workers, plan, warm, jobs)
                ledger = Ledger()
                merge(ledger, results)
                out = metrics.runs(ledger).select(OUTCOME)
                base = out if base is None else base
                same = out.equals(base)
                share = sum(r.validation_seconds for r in results) / max(sum(r.seconds for r in results), 1e-9)
                shares.append(share)
                rates[workers].append(len(jobs) / elapsed)
                print(
                    f"{backend:5s} workers={workers}: warm-up {start:5.1f}s (excluded); {len(jobs)} jobs in {elapsed:6.1f}s = "
                    f"{len(jobs) / elapsed:.2f} jobs/s; validation {share:.0%} of job time; same outcomes: {same}; "
                    f"load {load()}"
                )
                if not same:
                    raise SystemExit("outcomes differ between configurations: not deterministic")
        except Exception as e:  # noqa: BLE001 - e.g. Ray's node not starting: said and counted as not met, never skipped
            print(f"{backend}: FAILED to run: {type(e).__name__}: {str(e)[:300]}   load {load()}")
            figure(name, float("nan"), f">= {GOAL}x", False, unit="x")
            failed.append(backend)
            continue
        ratio = statistics.median(rates[2]) / statistics.median(rates[1])
        figure(name, ratio, f">= {GOAL}x", ratio >= GOAL, unit="x")
    after = ceiling()
    print(f"machine after: {after:.2f}x   load {load()}")
    if shares:
        figure("validation share of job time", 100 * sum(shares) / len(shares), "context", None, unit="%")
    figure("machine now: CPU loop, 2 procs / 1", min(before, after), f"~2x when quiet; load {load()}", None, unit="x")
    if failed:
        raise SystemExit(f"backend(s) {failed} did not run")


if __name__ == "__main__":
    main()

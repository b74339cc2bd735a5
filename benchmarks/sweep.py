"""A sweep of arms: cases per second on 1 vs 2 workers, local process pool and Ray, same run.

    .venv/bin/python benchmarks/sweep.py [--cases 6] [--arms direct,reflect] [--seeds 0,1] [--no-ray]

SIMULATED policy on the repair cases (the first --cases of them), every job validated for
real by pytest (the engine's validator). Each configuration starts with a cold verdict
cache (`_checker` cleared in this process; pool and Ray workers are fresh processes), runs
the same jobs and must give the same outcomes as the 1-worker local run (checked). It
prints jobs/s per configuration, the speedup of 2 workers over 1 on each backend (target
>= 1.7x on a 2-core machine, which other processes may be sharing), and the share of job
time spent in validation (the verify and score events' wall seconds).
"""

from __future__ import annotations

import argparse
import time

from labkit.experiments.arms import metrics
from labkit.experiments.arms.run import Plan, _cases, _checker, jobs_for, merge, sweep
from labkit.record.ledger import Ledger

OUTCOME = ["suite", "case", "arm", "seed", "status", "correct", "visible", "rounds", "calls", "scores"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=6)
    ap.add_argument("--arms", default="direct,reflect")
    ap.add_argument("--seeds", default="0,1")
    ap.add_argument("--no-ray", action="store_true")
    a = ap.parse_args()
    cases = sorted(_cases("repair"))[: a.cases]
    jobs = jobs_for("repair", cases, a.arms.split(","), [int(s) for s in a.seeds.split(",")])
    plan = Plan()
    configs = [("local", 1), ("local", 2)] + ([] if a.no_ray else [("ray", 1), ("ray", 2)])
    base = None
    rate: dict[tuple[str, int], float] = {}
    for backend, workers in configs:
        _checker.cache_clear()
        t0 = time.perf_counter()
        if backend == "ray":
            import ray

            ray.init(num_cpus=workers, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False)
            t0 = time.perf_counter()  # the cluster's start-up is not the sweep's work
            results = sweep(plan, jobs, backend="ray")
            elapsed = time.perf_counter() - t0
            ray.shutdown()
        else:
            results = sweep(plan, jobs, backend="local", workers=workers)
            elapsed = time.perf_counter() - t0
        ledger = Ledger()
        merge(ledger, results)
        out = metrics.runs(ledger).select(OUTCOME)
        base = out if base is None else base
        same = out.equals(base)
        share = sum(r.validation_seconds for r in results) / max(sum(r.seconds for r in results), 1e-9)
        rate[(backend, workers)] = len(jobs) / elapsed
        print(f"{backend:5s} workers={workers}: {len(jobs)} jobs in {elapsed:6.1f}s = {rate[(backend, workers)]:.2f} jobs/s; "
              f"validation {share:.0%} of job time; same outcomes as local/1: {same}")  # fmt: skip
        if not same:
            raise SystemExit("outcomes differ between backends: not deterministic")
    for backend in ("local", "ray"):
        if (backend, 2) in rate:
            print(f"{backend}: 2 workers / 1 worker = {rate[(backend, 2)] / rate[(backend, 1)]:.2f}x (target >= 1.7x)")


if __name__ == "__main__":
    main()

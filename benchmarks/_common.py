"""What every benchmark shares: timing, and one result line per figure for `./run bench`'s table.

Each benchmark reports its headline figures with `figure(name, value, goal, met)`: it prints
the figure and, when the LABKIT_BENCH_RESULTS environment variable names a file, appends one
JSON line {"bench", "figure", "value", "goal", "met"} to it. `./run bench` collects the lines
of every benchmark into one summary table (`python benchmarks/_common.py summary FILE`).

Benchmark scripts import this as `_common` (Python puts the script's folder on sys.path).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

RESULTS_ENV = "LABKIT_BENCH_RESULTS"


@contextmanager
def stub_server(latency: float) -> Iterator[str]:
    """labkit's OpenAI-compatible stub in its OWN process; yields its base URL.

    In another process, the server's own CPU (request parsing, JSON, threads) does not compete
    with the client being measured for the GIL. Stopped (by its pid) when the block ends.
    """
    proc = subprocess.Popen(
        [sys.executable, "-m", "labkit.models.stub_server", "--latency", str(latency)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        if not url.startswith("http://127.0.0.1:"):
            raise RuntimeError(f"the stub server did not start (said {url!r})")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def stub_stats(url: str) -> dict[str, int]:
    """What the stub saw: {"requests": n, "max_in_flight": k}."""
    with urllib.request.urlopen(url.rsplit("/v1", 1)[0] + "/stats", timeout=10) as r:
        return dict(json.loads(r.read()))


def timed(fn: Callable[[], Any]) -> float:
    """Seconds one call of `fn` takes (perf_counter)."""
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def median_time(fn: Callable[[], Any], reps: int) -> tuple[float, Any]:
    """Median seconds of `reps` calls of `fn`, and the last call's result."""
    times, out = [], None
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def best_and_median(times: list[float]) -> tuple[float, float]:
    return min(times), statistics.median(times)


def figure(name: str, value: float, goal: str, met: bool | None, *, unit: str = "", why: str = "") -> None:
    """Report one headline figure: printed now, collected into the summary table by ./run bench.

    `met=None` marks a figure shown for context, with no goal of its own (not counted). `why`
    says, with the same run's numbers, where the time of a missed goal goes; the summary
    repeats it under the table.
    """
    bench = Path(sys.argv[0]).stem
    shown = f"{value:,.3g}{unit}" if abs(value) < 1000 else f"{value:,.0f}{unit}"
    verdict = "context" if met is None else "MET" if met else "NOT MET"
    print(f"  -> {name}: {shown}   goal {goal}   {verdict}" + (f"\n     why: {why}" if why and met is False else ""))
    out = os.environ.get(RESULTS_ENV)
    if out:
        line = {"bench": bench, "figure": name, "value": shown, "goal": goal, "met": met, "why": why}
        with open(out, "a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")


def summary(path: str) -> int:
    """Print the collected figures as one table; exit status 0 (the table says what was missed)."""
    p = Path(path)
    rows = [json.loads(line) for line in p.read_text().splitlines() if line.strip()] if p.exists() else []
    if not rows:
        print("no benchmark figures were reported")
        return 1
    heads = ("benchmark", "figure", "value", "goal", "met")
    said = {True: "yes", False: "NO", None: "-"}
    table = [(r["bench"], r["figure"], r["value"], r["goal"], said[r["met"]]) for r in rows]
    widths = [max(len(h), *(len(t[i]) for t in table)) for i, h in enumerate(heads)]
    line = "  ".join(h.ljust(w) for h, w in zip(heads, widths, strict=True))
    print("\n== summary: every headline figure, its goal, met or not")
    print(line)
    print("-" * len(line))
    for t in table:
        print("  ".join(c.ljust(w) for c, w in zip(t, widths, strict=True)))
    goals = [r for r in rows if r["met"] is not None]
    print(f"{sum(r['met'] for r in goals)} of {len(goals)} goals met")
    missed = [r for r in goals if not r["met"]]
    for r in missed:
        print(f"  NOT MET {r['bench']}: {r['figure']}: {r.get('why') or 'no explanation given'}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "summary":
        raise SystemExit(summary(sys.argv[2]))
    raise SystemExit("usage: python benchmarks/_common.py summary RESULTS.jsonl")

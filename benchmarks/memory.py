"""Skill-library retrieval latency and prompt tokens vs library size (10, 100, 1,000 skills).

    .venv/bin/python benchmarks/memory.py [--reps 3]

Same run, same library, same held-out queries (labkit.experiments.memory.skills_measure, SYNTHETIC
skills checked by the real oracle):

  labkit     SkillLibrary.search: BM25 (bm25s) over the descriptions, index built once
  baseline   SkillLibrary.scan: a Python linear scan scoring every description by shared words

Reports per size: ms per query for each, the ratio baseline/labkit, and the prompt tokens per
disclosure level (L1 for every skill, L1 for the retrieved only, L2, L3) with precision@1.
The index build is timed separately (it is paid once per library change, not per query).
"""

from __future__ import annotations

import argparse
import time

from _common import figure

from labkit.experiments.memory import skills_measure as sx


def per_query(fn, queries: list[str], reps: int) -> float:
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        for q in queries:
            fn(q, 3)
        best = min(best, (time.perf_counter() - t0) / len(queries))
    return best * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    cands = sx.candidates()
    checks = sx.verify(cands[:1250])
    tokens = sx.measure()
    print(
        f"{'skills':>6} {'build ms':>9} {'bm25 ms/q':>10} {'scan ms/q':>10} {'scan/bm25':>9} "
        f"{'L1 all':>8} {'L1 retr':>8} {'L2':>6} {'L3':>6} {'p@1':>5}"
    )
    ratios, per_task = {}, {}
    for row in tokens.iter_rows(named=True):
        lib, _ = sx.build(row["skills"], cands, checks)
        queries = [t.query for t in sx.tasks(lib)]
        t0 = time.perf_counter()
        lib.search("warm the index", 1)
        build = (time.perf_counter() - t0) * 1000
        bm25 = per_query(lib.search, queries, args.reps)
        scan = per_query(lib.scan, queries, args.reps)
        ratios[row["skills"]] = scan / bm25
        per_task[row["skills"]] = row["L1 tokens (retrieved only)"] + row["L2 tokens"] + row["L3 tokens"]
        print(
            f"{row['skills']:>6} {build:>9.1f} {bm25:>10.3f} {scan:>10.3f} {scan / bm25:>9.1f} "
            f"{row['L1 tokens (all skills)']:>8.0f} {row['L1 tokens (retrieved only)']:>8.0f} "
            f"{row['L2 tokens']:>6.0f} {row['L3 tokens']:>6.0f} {row['precision@1']:>5.2f}"
        )

    figure(
        "skill search at 1,000 skills: linear scan / BM25 per query", ratios[1000], ">= 3x", ratios[1000] >= 3, unit="x"
    )
    growth = per_task[1000] / per_task[100]
    figure("retrieved prompt (L1 top + L2 + L3) growth 100 -> 1,000 skills", growth, "< 1.3x", growth < 1.3, unit="x")
    l1 = tokens["L1 tokens (all skills)"].to_list()
    figure("always-loaded L1 (every skill) growth 10 -> 1,000 skills", l1[2] / l1[0], "context", None, unit="x")


if __name__ == "__main__":
    main()

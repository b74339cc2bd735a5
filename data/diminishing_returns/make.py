"""Build rounds.csv: per-case states whose round transitions reproduce the chapter's table.

The chapter (seed 000, worked example B) gives only aggregates: 100 first-round failures;
rounds fixed/broken 35/4, 10/6, 3/7. Everything per case here is constructed by labkit
to be consistent with those aggregates — which cases move, the 100 cases that were right
from the start, the slices, cost and latency are illustrative, not from the chapter.

Run from the repo root:  .venv/bin/python data/diminishing_returns/make.py
The output is deterministic (seeded); tests check the committed file equals a fresh build.
"""

from __future__ import annotations

import csv
import random
from pathlib import Path

HERE = Path(__file__).parent
SLICES = ("string", "numeric", "stateful")


def build() -> list[dict[str, object]]:
    rng = random.Random(4)
    failed = [f"f{i:03d}" for i in range(1, 101)]  # the chapter's 100 first-round failures
    passed = [f"p{i:03d}" for i in range(1, 101)]  # assumption: 100 cases right from the start
    # Slices: stateful cases are harder to fix and easier to break (fixes drawn with lower weight).
    slice_of = {c: SLICES[i % 3] for i, c in enumerate(failed + passed)}
    fix_weight = {"string": 3.0, "numeric": 2.0, "stateful": 1.0}
    break_weight = {"string": 1.0, "numeric": 1.0, "stateful": 3.0}

    def draw(pool: list[str], k: int, weight: dict[str, float]) -> list[str]:
        pool, out = sorted(pool), []
        for _ in range(k):
            pick = rng.choices(pool, weights=[weight[slice_of[c]] for c in pool])[0]
            pool.remove(pick)
            out.append(pick)
        return out

    state = {c: False for c in failed} | {c: True for c in passed}
    history = {c: [state[c]] for c in state}
    fixed_in: dict[int, list[str]] = {}
    # (round, fixed from never-fixed, fixed from broken earlier, broken from originally right,
    #  broken from fixed earlier) -- the totals are the chapter's 35/4, 10/6, 3/7.
    plan = [(1, 35, 0, 4, 0), (2, 10, 0, 4, 2), (3, 2, 1, 3, 4)]
    for rnd, fix_new, fix_again, brk_orig, brk_fixed in plan:
        never = [c for c in failed if not any(history[c])]
        rebroken = [c for c in state if not state[c] and any(history[c][1:])]
        orig_right = [c for c in passed if state[c]]
        was_fixed = [c for c in failed if state[c]]
        fix = draw(never, fix_new, fix_weight) + draw(rebroken, fix_again, fix_weight)
        brk = draw(orig_right, brk_orig, break_weight) + draw(was_fixed, brk_fixed, break_weight)
        for c in fix:
            state[c] = True
        for c in brk:
            state[c] = False
        fixed_in[rnd] = fix
        for c in state:
            history[c].append(state[c])

    rows = []
    for c in sorted(state):
        for rnd, ok in enumerate(history[c]):
            # Illustrative spend: round 0 is the first generation; each repair round reviews
            # every case with a longer context than the last, so cost and latency grow.
            cost = 1.0 if rnd == 0 else round((1.0 + 0.6 * (rnd - 1)) * rng.uniform(0.8, 1.2), 3)
            seconds = round((2.0 if rnd == 0 else 3.0 + 1.5 * (rnd - 1)) * rng.uniform(0.7, 1.3), 3)
            rows.append(
                {
                    "case": c,
                    "slice": slice_of[c],
                    "round": rnd,
                    "correct": str(ok).lower(),
                    "cost": cost,
                    "seconds": seconds,
                }
            )
    return rows


def write(path: Path = HERE / "rounds.csv") -> Path:
    rows = build()
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    return path


if __name__ == "__main__":
    print(write())

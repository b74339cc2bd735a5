"""The Reflexion authors' logged GPT-4 runs (noahshinn/reflexion): tables, loaders, the candidate text.

Four runs and one test log, kept as three compact tables under `data/published/reflexion/`
(texts once; SOURCE.md gives repository, commit, paths, sha256, licence and citation):

- `problems.jsonl`: {"benchmark", "task_id", "prompt", "entry_point", "test", "canonical_solution"}
  (HumanEval's 164 and the 397 MBPP problems of MultiPL-E's typed Python MBPP; MBPP has no
  canonical solution: null);
- `runs.jsonl`: {"run", "benchmark", "task_id", "solution", "is_solved", "reflections"}, the
  solution and `is_solved` exactly as logged (`reflections` is [] for the single-shot runs);
- `self_tests.jsonl`: {"benchmark", "task_id", "tests", "is_solved"} from the authors' separate
  `test-acc` run: GPT-4's self-written asserts for each HumanEval prompt (same model, same
  test-generation prompt family as the Reflexion run) and whether the canonical solution passed
  them all.

`python -m labkit.experiments.published build-reflexion --repo PATH` rebuilds the tables from a
local clone and refuses (ReferenceDataMissing) when an original's sha256 is not the recorded one.
Re-grading lives in `regrade`, the ladder summary in `ladder`.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from labkit.core.errors import ReferenceDataMissing
from labkit.core.paths import data_root

__all__ = [
    "BUILD_COMMAND", "COMMIT", "ORIGINALS", "REPOSITORY", "RUNS", "Original", "build", "candidate_source",
    "build_main", "load_problems", "load_runs", "load_self_tests", "tables_dir",
]  # fmt: skip

REPOSITORY = "https://github.com/noahshinn/reflexion"
COMMIT = "218cf0ef1df84b05ce379dd4a8e47f17766733a0"
BUILD_COMMAND = "python -m labkit.experiments.published build-reflexion --repo PATH_TO_LOCAL_CLONE"
RUNS = ("reflexion-humaneval", "simple-humaneval", "reflexion-mbpp", "simple-mbpp")
_ROOT = "programming_runs/root/"


@dataclass(frozen=True)
class Original:
    """One file of the source repository the tables are built from, and its recorded digest."""

    name: str  # a run name, "self-tests" or "licence"
    path: str  # inside the repository
    sha256: str


ORIGINALS = (
    Original("reflexion-humaneval", _ROOT + "reflexion_humaneval_py_pass_at_1/reflexion_humaneval_py_pass_at_1.jsonl",
             "548e1a6650265901334e90a98ad7c9dd6752da921b6ded56dd611c142314cd5e"),
    Original("simple-humaneval", _ROOT + "simple_human_eval_py_logging/humaneval-py..gz_simple_1_gpt-4_pass_at_k_1_py.jsonl",
             "04021b949609361836777664260eddf34f63d23d03693dab43ec90e2ef1d7ee5"),
    Original("reflexion-mbpp", _ROOT + "reflexion_mbpp_py/mbpp-py._reflexion_5_gpt-4_pass_at_k_1_py.jsonl",
             "346eca9384541ccae9081a79c0446977e9c85536602a3e8b8f8afb9d5e8326cd"),
    Original("simple-mbpp", _ROOT + "simple_mbpp_py/mbpp-py._simple_1_gpt-4_pass_at_k_1_py.jsonl",
             "d0114e6e74580427a73ad370e663637730b92119b9195b696ee21e75ad99edfa"),
    Original("self-tests", _ROOT + "testacc_humaneval_py/humaneval-py..gz_test-acc_1_gpt-4_pass_at_k_1_py.jsonl",
             "3e2c143f8360e4a897db9e5507cf29ece360a099c16962ef7a17638c9b3ad920"),
    Original("licence", "LICENSE", "6e9db9e62fe5597c3f04a620136eadb7eb8e8f77ebb0e820f7098546fb8a08e6"),
)  # fmt: skip

_SCHEMAS: dict[str, dict[str, Any]] = {
    "problems": {"benchmark": pl.String, "task_id": pl.String, "prompt": pl.String, "entry_point": pl.String,
                 "test": pl.String, "canonical_solution": pl.String},
    "runs": {"run": pl.String, "benchmark": pl.String, "task_id": pl.String, "solution": pl.String,
             "is_solved": pl.Boolean, "reflections": pl.List(pl.String)},
    "self_tests": {"benchmark": pl.String, "task_id": pl.String, "tests": pl.List(pl.String), "is_solved": pl.Boolean},
}  # fmt: skip


def tables_dir() -> Path:
    """data/published/reflexion under labkit's one data root (LABKIT_DATA honoured at call time)."""
    return data_root() / "published" / "reflexion"


def _benchmark(run: str) -> str:
    return run.rsplit("-", 1)[1]


def _task_id(row: Mapping[str, Any]) -> str:
    # HumanEval rows carry `task_id`; the MBPP rows (MultiPL-E's format) carry `name`, e.g. "mbpp_234_volume_cube".
    return str(row["task_id"] if "task_id" in row else row["name"])


def _read_original(repo: Path, original: Original, digests: Mapping[str, str]) -> bytes:
    path = repo / original.path
    if not path.is_file():
        raise ReferenceDataMissing(f"{path} is missing: {BUILD_COMMAND} needs a clone of {REPOSITORY} at {COMMIT}")
    data = path.read_bytes()
    got, want = hashlib.sha256(data).hexdigest(), digests[original.path]
    if got != want:
        raise ReferenceDataMissing(
            f"{path}: sha256 {got}, but SOURCE.md records {want} for {original.path} at commit {COMMIT}: "
            "not the file the tables were built from; refusing to build"
        )
    return data


def _rows(data: bytes, where: str) -> list[dict[str, Any]]:
    out = []
    for n, line in enumerate(data.decode("utf-8").splitlines(), start=1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise ReferenceDataMissing(f"{where}:{n}: not valid JSON ({e.msg})") from None
    return out


def build(repo: Path, out: Path, digests: Mapping[str, str] | None = None) -> dict[str, list[dict[str, Any]]]:
    """Read the originals under `repo` (digests checked first), write the three tables to `out`.

    `digests` maps each original's path to its sha256 (default: the recorded ORIGINALS). Every
    log must describe the same problems (same prompt, test, entry point): a mismatch is refused."""
    digests = digests if digests is not None else {o.path: o.sha256 for o in ORIGINALS}
    raw = {o.name: _read_original(repo, o, digests) for o in ORIGINALS}
    logs = {name: _rows(raw[name], o.path) for o in ORIGINALS if (name := o.name) != "licence"}
    problems: dict[tuple[str, str], dict[str, Any]] = {}
    runs: list[dict[str, Any]] = []
    for run in RUNS:
        bench = _benchmark(run)
        for row in logs[run]:
            tid = _task_id(row)
            problem = {"benchmark": bench, "task_id": tid, "prompt": row["prompt"], "entry_point": row["entry_point"],
                       "test": row["test"], "canonical_solution": row.get("canonical_solution")}  # fmt: skip
            seen = problems.setdefault((bench, tid), problem)
            if seen != problem:
                raise ReferenceDataMissing(f"{run}: problem {tid} differs from the same problem in another log")
            runs.append(
                {
                    "run": run,
                    "benchmark": bench,
                    "task_id": tid,
                    "solution": row["solution"],
                    "is_solved": bool(row["is_solved"]),
                    "reflections": list(row.get("reflections", [])),
                }
            )
    self_tests = []
    for row in logs["self-tests"]:
        tid = _task_id(row)
        if ("humaneval", tid) not in problems:
            raise ReferenceDataMissing(f"self-tests: {tid} is not a HumanEval problem of the runs")
        self_tests.append(
            {
                "benchmark": "humaneval",
                "task_id": tid,
                "tests": list(row["solution"]),
                "is_solved": bool(row["is_solved"]),
            }
        )
    tables = {"problems": list(problems.values()), "runs": runs, "self_tests": self_tests}
    out.mkdir(parents=True, exist_ok=True)
    for name, rows in tables.items():
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        (out / f"{name}.jsonl").write_text(text, encoding="utf-8")
    return tables


def _load(name: str) -> pl.DataFrame:
    path = tables_dir() / f"{name}.jsonl"
    if not path.is_file():
        raise ReferenceDataMissing(f"{path} is missing: rebuild it with `{BUILD_COMMAND}`")
    stat = path.stat()
    return _read(name, str(path), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=16)
def _read(name: str, file: str, mtime_ns: int, size: int) -> pl.DataFrame:
    """One table, read once per file version (a page reads the same table many times; a rebuilt
    file has another mtime or size). Polars frames are not changed in place: sharing one is safe."""
    path = Path(file)
    schema = _SCHEMAS[name]
    try:
        frame = pl.read_ndjson(path, schema=schema)
    except Exception as e:  # polars raises several kinds for a damaged file
        raise ReferenceDataMissing(f"{path} cannot be read ({e}): rebuild it with `{BUILD_COMMAND}`") from e
    if frame.height == 0 or frame.select(pl.col("task_id").is_null().any()).item():
        raise ReferenceDataMissing(f"{path} is empty or has rows without a task_id: rebuild it with `{BUILD_COMMAND}`")
    return frame


def load_problems() -> pl.DataFrame:
    """problems.jsonl: one row per (benchmark, task_id)."""
    return _load("problems")


def load_runs() -> pl.DataFrame:
    """runs.jsonl: one row per (run, task_id), solution and is_solved as logged."""
    return _load("runs")


def load_self_tests() -> pl.DataFrame:
    """self_tests.jsonl: GPT-4's self-written tests per HumanEval problem (the authors' test-acc run)."""
    return _load("self_tests")


def candidate_source(problem_row: Mapping[str, Any], run_row: Mapping[str, Any]) -> str:
    """The text of `solution.py` for a logged solution: the program the authors' grader ran.

    Two shapes are logged. The March-2023 Reflexion HumanEval code (the log's last change,
    commit 891dbd3's parent) kept the function BODY (`parse_body` of the reply) and ran
    `item["prompt"] + soln`; its unsolved rows have solution "" (it wrote "" on failure), so
    their candidate is the prompt alone, a function whose body is its docstring. The later
    code (the simple HumanEval run and both MBPP runs) logged `func_sig + func_body`, which
    already starts with the prompt, and ran it as is. So: prompt + solution unless the solution
    already starts with the prompt. Nothing is added (no `from typing import *`): the authors'
    executor ran in its own module's globals, which labkit does not reproduce (see
    disagreements.json)."""
    prompt, solution = str(problem_row["prompt"]), str(run_row["solution"])
    return solution if solution.startswith(prompt) else prompt + solution


def build_main(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(
        prog="python -m labkit.experiments.published build-reflexion",
        description="Rebuild data/published/reflexion's tables from a local clone.",
    )
    p.add_argument(
        "--repo",
        type=Path,
        required=True,
        help=f"a clone of {REPOSITORY} (checked out at {COMMIT[:12]})",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        help="where to write the tables (default: data/published/reflexion)",
    )
    a = p.parse_args(list(argv))
    out = a.out or tables_dir()
    tables = build(a.repo, out)
    print(json.dumps({name: len(rows) for name, rows in tables.items()}) + f" -> {out}")
    return 0

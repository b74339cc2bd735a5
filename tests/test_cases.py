"""The case format: one schema, one loader, a specific CaseError for every malformed field,
and the layouts a researcher brings (flat, src/, fixtures of any type) run for real."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from labkit.core import patch as patches
from labkit.core.errors import CaseError
from labkit.core.paths import DATA
from labkit.grading.cases import load_case
from labkit.grading.validator import Validator
from labkit.loop.engine import Situation
from labkit.loop.strategies.reflector import situation_prompt

FIX = """\
--- a/{path}
+++ b/{path}
@@ -1,2 +1,2 @@
 def double(x):
-    return x + x + 1
+    return x + x
"""
MODULE = "def double(x):\n    return x + x + 1\n"


def make(root: Path, files: dict[str, str | bytes], spec: dict[str, object] | str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel, data in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data if isinstance(data, bytes) else data.encode())
    text = spec if isinstance(spec, str) else json.dumps(spec)
    (root / "case.json").write_text(text)
    return root


def basic(root: Path, **override: object) -> Path:
    spec: dict[str, object] = {
        "name": "dbl",
        "code": ["*.py"],
        "fail_to_pass": ["tests/test_m.py::test_two"],
        "pass_to_pass": ["tests/test_m.py::test_type"],
        "patches": {"fix": {"file": "patches/fix.diff"}},
    }
    spec.update(override)
    files = {
        "m.py": MODULE,
        "tests/test_m.py": "from m import double\n\ndef test_two():\n    assert double(1) == 2\n\n"
        "def test_type():\n    assert isinstance(double(1), int)\n",
        "patches/fix.diff": FIX.format(path="m.py"),
    }
    return make(root, files, spec)


# -- every malformed field: a CaseError naming the file and the field ------------------------

MALFORMED = [
    ("patch entry as a string", {"patches": {"fix": "patches/fix.diff"}}, ["'patches.fix'", "expected an object"]),
    ("patch file missing", {"patches": {"fix": {"file": "patches/nope.diff"}}}, ["'patches.fix.file'", "does not exist"]),
    ("patch without file and no default", {"patches": {"other": {"label": "x"}}}, ["'patches.other.file'", "patches/other.diff"]),
    ("patch without file, its diff at the old default", {"patches": {"fix": {"label": "the fix"}}}, ["'patches.fix.file' is required", "patches/fix.diff"]),
    ("patch list entry without file", {"patches": [{"name": "fix", "kind": "fix"}]}, ["'patches.fix.file' is required"]),
    ("fail_to_pass as a string", {"fail_to_pass": "tests/test_m.py::test_two"}, ["'fail_to_pass'", "expected a list"]),
    ("unknown field (a typo)", {"fail_to_passs": []}, ["'fail_to_passs'", "not part of the case format"]),
    ("patch cap not positive", {"patch_cap": {"max_hunks": 0}}, ["'patch_cap.max_hunks'", "positive integer"]),
    ("patch cap as a string", {"patch_cap": "small"}, ["'patch_cap'", "expected an object"]),
    ("test id in an unknown file", {"fail_to_pass": ["tests/test_x.py::test_two"]}, ["tests/test_x.py", "not among the protected"]),
    ("test id naming no test", {"fail_to_pass": ["tests/test_m.py::test_nine"]}, ["test_nine"]),
    ("tests glob matching nothing", {"tests": ["spec/**/*.py"]}, ["'tests'", "no files match"]),
    ("import root missing", {"import_roots": ["src"]}, ["'import_roots'", "not a folder"]),
    ("path outside the case", {"tests": ["../x/*.py"]}, ["'tests'", "relative path inside the case"]),
    ("patch base unknown", {"patches": {"fix": {"file": "patches/fix.diff", "base": "zz"}}}, ["'patches.fix.base'", "'zz'"]),
    ("patch list entry without name", {"patches": [{"file": "patches/fix.diff"}]}, ["'patches'", "string 'name'"]),
    ("groups value a string", {"groups": {"g": "tests/test_m.py::test_two"}}, ["'groups.g'", "expected a list"]),
    ("name empty", {"name": ""}, ["'name'", "non-empty"]),
    ("hidden as a list", {"hidden": []}, ["'hidden'", "expected an object"]),
    ("code as a number", {"code": 5}, ["'code'", "expected a string or a list of strings, got int 5"]),
    ("patch cap as a quoted number", {"patch_cap": {"max_lines": "8"}}, ["'patch_cap.max_lines'", "expected an integer"]),
    ("flag as a word", {"initially_correct": "yes"}, ["'initially_correct'", "true or false"]),
    ("patch kind unknown", {"patches": {"fix": {"file": "patches/fix.diff", "kind": "great"}}}, ["'patches.fix.kind'", "great"]),
]  # fmt: skip


@pytest.mark.parametrize(("what", "override", "needles"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_field_names_file_and_field(tmp_path, what, override, needles):
    root = basic(tmp_path / "c", **override)
    with pytest.raises(CaseError) as info:
        load_case(root)
    msg = str(info.value)
    assert str(root / "case.json") in msg or str(root) in msg, msg
    for needle in needles:
        assert needle in msg, msg


def test_missing_name_is_required(tmp_path):
    root = basic(tmp_path / "c")
    spec = json.loads((root / "case.json").read_text())
    del spec["name"]
    (root / "case.json").write_text(json.dumps(spec))
    with pytest.raises(CaseError, match=r"case\.json: field 'name' is required"):
        load_case(root)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('{"name": "x",', "not valid JSON at line 1"),
        ("[1, 2]", "expected a JSON object at the top, got a list"),
        ("", "not valid JSON"),
    ],
)
def test_not_a_json_object(tmp_path, text, needle):
    root = basic(tmp_path / "c")
    (root / "case.json").write_text(text)
    with pytest.raises(CaseError, match=needle):
        load_case(root)


def test_no_case_json_and_no_folder(tmp_path):
    with pytest.raises(CaseError, match="no case.json"):
        load_case(tmp_path)
    with pytest.raises(CaseError, match="does not exist"):
        load_case(tmp_path / "nope")


def test_binary_code_file_is_named(tmp_path):
    root = basic(tmp_path / "c")
    (root / "blob.py").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(CaseError, match=r"field 'code'.*blob\.py is not UTF-8"):
        load_case(root)


# -- the shipped cases load through this one loader --------------------------------------------


def test_worked_example_unchanged():
    case = load_case("cache_isolation")
    assert list(case.start.files) == ["pricing.py"]
    assert sorted(case.suite.tests) == ["tests/test_cache_hits.py", "tests/test_isolation.py"]
    assert dict(case.patch_cap) == {"max_hunks": 2, "max_lines": 8}
    assert case.hidden is None and len(case.patches) == 3


def test_repair_cases_load_with_hidden_tests():
    dirs = sorted(p.parent for p in (DATA / "repair_cases").glob("*/case.json"))
    assert len(dirs) == 33
    for d in dirs:
        case = load_case(d)
        meta = json.loads((d / "case.json").read_text())
        assert case.name == meta["id"] and list(case.start.files) == [meta["module"]]
        assert case.start.label == "original"
        assert (case.spec.slice, case.spec.module, case.spec.initially_correct) == (
            meta["slice"],
            meta["module"],
            meta["initially_correct"],
        )
        assert case.suite.fail_to_pass == tuple(meta["visible"]["fail_to_pass"])
        assert case.hidden is not None
        assert list(case.hidden.tests) == ["tests/test_hidden.py"]
        assert case.hidden.tests["tests/test_hidden.py"] == (d / "hidden/test_hidden.py").read_text()
        assert case.hidden.pass_to_pass == tuple(meta["hidden"]["pass_to_pass"])
        for p in meta["patches"]:
            spec = case.patch_specs[p["name"]]
            assert (spec.kind, spec.base, spec.effect) == (p["kind"], p["base"], p["effect"])


# -- layouts, run for real ----------------------------------------------------------------------


def resolved_after_fix(root: Path) -> tuple[object, object]:
    case = load_case(root)
    v = Validator()
    before = v.run(case.start, case.suite)
    after = v.retest(before, patches.apply(case.start, case.patch("fix")), case.suite)
    return before, after


def test_flat_layout(tmp_path):
    files = {
        "m.py": MODULE,
        "test_m.py": "from m import double\n\ndef test_two():\n    assert double(1) == 2\n\n"
        "def test_type():\n    assert isinstance(double(1), int)\n",
        "patches/fix.diff": FIX.format(path="m.py"),
    }
    spec = {
        "name": "flat", "code": ["*.py"], "tests": ["test_*.py"],
        "fail_to_pass": ["test_m.py::test_two"], "pass_to_pass": ["test_m.py::test_type"],
        "patches": {"fix": {"file": "patches/fix.diff"}},
    }  # fmt: skip
    root = make(tmp_path / "flat", files, spec)
    case = load_case(root)
    assert list(case.start.files) == ["m.py"] and list(case.suite.tests) == ["test_m.py"]
    before, after = resolved_after_fix(root)
    assert before.fail_to_fail == ("test_m.py::test_two",) and before.pass_to_pass  # type: ignore[attr-defined]
    assert after.resolved  # type: ignore[attr-defined]


def test_src_layout_needs_and_uses_import_roots(tmp_path):
    files = {
        "src/dbl/__init__.py": "from dbl.core import double\n",
        "src/dbl/core.py": MODULE,
        "tests/test_m.py": "from dbl import double\n\ndef test_two():\n    assert double(1) == 2\n\n"
        "def test_type():\n    assert isinstance(double(1), int)\n",
        "patches/fix.diff": FIX.format(path="src/dbl/core.py"),
    }
    spec = {
        "name": "src", "code": ["src/**/*.py"], "import_roots": ["src"],
        "fail_to_pass": ["tests/test_m.py::test_two"], "pass_to_pass": ["tests/test_m.py::test_type"],
        "patches": {"fix": {"file": "patches/fix.diff"}},
    }  # fmt: skip
    root = make(tmp_path / "src", files, spec)
    before, after = resolved_after_fix(root)
    assert before.pass_to_pass == ("tests/test_m.py::test_type",)  # type: ignore[attr-defined]
    assert after.resolved  # type: ignore[attr-defined]
    # Without the import root the package cannot be imported: a collection error, kept as evidence.
    spec["import_roots"] = []
    (root / "case.json").write_text(json.dumps(spec))
    case = load_case(root)
    verdict = Validator().run(case.start, case.suite)
    outcome = {r.nodeid: r for r in verdict.evidence.results}["tests/test_m.py::test_type"]
    assert outcome.outcome == "error"
    assert "ModuleNotFoundError: No module named 'dbl'" in outcome.message


def test_fixtures_of_any_type_reach_the_sandbox(tmp_path):
    blob = bytes(range(256)) * 4  # not UTF-8
    files = {
        "m.py": MODULE,
        "tests/test_m.py": (
            "import json\nfrom pathlib import Path\nfrom m import double\n\n"
            "HERE = Path(__file__).parent\n\n"
            "def test_two():\n    assert double(json.loads((HERE / 'data/cases.json').read_text())['x']) == 2\n\n"
            "def test_type():\n    assert (HERE / 'data/blob.bin').read_bytes() == bytes(range(256)) * 4\n"
            "    assert (HERE / 'data/notes.csv').read_text() == 'a,b\\n1,2\\n'\n"
        ),
        "tests/data/cases.json": '{"x": 1}',
        "tests/data/blob.bin": blob,
        "tests/data/notes.csv": "a,b\n1,2\n",
        "patches/fix.diff": FIX.format(path="m.py"),
    }
    spec = {
        "name": "fx", "code": ["*.py"],
        "fail_to_pass": ["tests/test_m.py::test_two"], "pass_to_pass": ["tests/test_m.py::test_type"],
        "patches": {"fix": {"file": "patches/fix.diff"}},
    }  # fmt: skip
    root = make(tmp_path / "fx", files, spec)
    case = load_case(root)  # fixtures by default: the non-Python files beside the tests
    assert case.suite.tests["tests/data/blob.bin"] == blob
    assert case.suite.tests["tests/data/cases.json"] == '{"x": 1}'
    before, after = resolved_after_fix(root)
    assert before.pass_to_pass == ("tests/test_m.py::test_type",)  # type: ignore[attr-defined]
    assert after.resolved  # type: ignore[attr-defined]
    # The fixtures are protected: a candidate that rewrites one is alarmed.
    tampered = case.start.with_files({**case.start.files, "tests/data/cases.json": '{"x": 0.5}'})
    assert Validator().run(tampered, case.suite).quarantined


def test_explicit_fixtures_glob(tmp_path):
    root = basic(tmp_path / "c", fixtures=["data/*.txt"])
    (root / "data").mkdir()
    (root / "data" / "a.txt").write_text("hello")
    case = load_case(root)
    assert case.suite.tests["data/a.txt"] == "hello"


# -- collection errors reach the verdict and the reflector ----------------------------------------


def test_collection_error_text_reaches_the_reflector(tmp_path):
    root = basic(tmp_path / "c")
    (root / "m.py").write_text("def double(x):\n    return x +\n")  # a SyntaxError
    case = load_case(root)
    verdict = Validator().run(case.start, case.suite)
    result = {r.nodeid: r for r in verdict.evidence.results}["tests/test_m.py::test_two"]
    assert result.outcome == "error"
    assert "SyntaxError" in result.message and "m.py" in result.message
    assert len(result.message) < 2200  # bounded
    prompt = situation_prompt(Situation(round=1, candidate=case.start, verdict=verdict), "py")
    assert "SyntaxError" in prompt

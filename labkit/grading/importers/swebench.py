"""A SWE-bench-style instance record as a labkit case.

Input: a record (`instance_id`, `patch`, `test_patch`, `FAIL_TO_PASS`, `PASS_TO_PASS` — lists,
or JSON strings holding lists as in the published datasets — and optionally `repo`,
`version`, `base_commit`, `problem_statement`) and the repository's files at `base_commit`
(labkit never clones: give the folder).

Output, a case folder:
- protected tests: every file the test patch touches (after applying it), every file a
  node id names, and every conftest.py; other files under those tests' folders are fixtures;
- code: the repository's other *.py files (src/ becomes an import root when it is one);
- patches/gold.diff: the instance's patch (checked to apply); transcript.jsonl: a scripted
  round proposing it (the reference, labelled scripted — not a model's answer).

Node ids, as SWE-bench writes them:
- an id without parameters (`t.py::test_f`) stands for all of `test_f`'s parametrisations,
  all of which must pass;
- a truncated parametrised id (`t.py::test_f[a b` cut at a space by SWE-bench's log
  parser: unbalanced brackets) is matched by prefix, as SWE-bench's harness does for the
  published datasets; every test it matches must pass (an ambiguous match that disagrees
  does not pass);
- an xfail-marked PASS_TO_PASS test: SWE-bench counts XFAIL as a pass. labkit does not
  require it: an expected failure protects nothing, and a required test reported as
  skipped/xfailed is an integrity alarm (a candidate can call `pytest.xfail()` to dodge a
  test). So the importer moves it out of pass_to_pass into `excluded`, with the reason,
  where `labkit check` shows it. (Detected from the protected file: an `xfail` mark on the
  function, its class, or the module's `pytestmark`.)
"""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from labkit.core import patch as patches
from labkit.core.errors import CaseError, PatchError
from labkit.core.types import Candidate, Patch
from labkit.grading.acceptance import split_nodeid
from labkit.grading.importers.common import reference_transcript, write_case

__all__ = ["check_record", "import_instance", "read_record", "xfail_marked"]

_SKIP = frozenset({".git", "__pycache__", ".pytest_cache", ".tox", ".venv", "node_modules"})
XFAIL_REASON = (
    "xfail-marked PASS_TO_PASS: SWE-bench counts XFAIL as a pass; labkit requires a real pass "
    "and an expected failure protects nothing, so it is not required here"
)


def read_record(path: str | Path) -> dict[str, Any]:
    """Read one instance record (a JSON object). Malformed fields raise CaseError naming them."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CaseError(f"cannot read {p}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise CaseError(f"{p}: not valid JSON at line {exc.lineno}: {exc.msg}") from None
    return check_record(data, str(p))


def check_record(data: Any, where: str = "record") -> dict[str, Any]:
    if not isinstance(data, dict):
        raise CaseError(f"{where}: expected a JSON object (one instance record)")
    out = dict(data)
    for key in ("instance_id", "patch", "test_patch"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise CaseError(f"{where}: field {key!r}: expected a non-empty string")
    for key in ("FAIL_TO_PASS", "PASS_TO_PASS"):
        value = data.get(key, [])
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                raise CaseError(
                    f"{where}: field {key!r}: expected a list of test ids (or a JSON string of one), got {value[:60]!r}"
                ) from None
        if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
            raise CaseError(f"{where}: field {key!r}: expected a list of test id strings")
        out[key] = [x.strip() for x in value if x.strip()]
    if not out["FAIL_TO_PASS"]:
        raise CaseError(f"{where}: field 'FAIL_TO_PASS': expected at least one test id")
    return out


def _tree(repo: Path) -> dict[str, bytes]:
    return {
        p.relative_to(repo).as_posix(): p.read_bytes()
        for p in sorted(repo.rglob("*"))
        if p.is_file() and not (_SKIP & set(p.relative_to(repo).parts))
    }


def _text(files: Mapping[str, bytes]) -> dict[str, str]:
    out = {}
    for rel, data in files.items():
        try:
            out[rel] = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
    return out


def xfail_marked(source: str, nodeid: str) -> bool:
    """Whether the test `nodeid` names carries an xfail mark in `source` (function, class, module)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    _, names = split_nodeid(nodeid)
    bare = [n.partition("[")[0] for n in names]
    if any(
        _is_xfail(n.value)
        for n in tree.body
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in n.targets)
    ):
        return True
    body: list[ast.stmt] = tree.body
    for name in bare:
        node = next(
            (
                n
                for n in body
                if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and n.name == name
            ),
            None,
        )
        if node is None:
            return False
        if any(_is_xfail(d) for d in node.decorator_list):
            return True
        body = node.body if isinstance(node, ast.ClassDef) else []
    return False


def _is_xfail(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == "xfail" for n in ast.walk(node))


def import_instance(record: Mapping[str, Any], repo: str | Path, folder: str | Path) -> Path:
    """Write the instance as a case folder; returns it."""
    rec = check_record(dict(record), f"record {record.get('instance_id', '?')!r}")
    repo = Path(repo)
    if not repo.is_dir():
        raise CaseError(f"repository folder {repo} does not exist")
    tree = _tree(repo)
    text = _text(tree)
    test_patch = Patch(rec["test_patch"], description="test patch")
    try:
        touched = set(patches.touched(test_patch)) - {"/dev/null"}
        with_tests = patches.apply(Candidate({p: text[p] for p in text if p in touched}), test_patch)
    except PatchError as exc:
        raise CaseError(f"field 'test_patch' does not apply to {repo}: {exc}") from None
    ids = rec["FAIL_TO_PASS"] + rec["PASS_TO_PASS"]
    named = {split_nodeid(i)[0] for i in ids}
    tests: dict[str, str] = dict(with_tests.files)
    for path in named - set(tests):
        if path not in text:
            raise CaseError(f"test id names {path!r}, which is neither in {repo} nor in the test patch")
        tests[path] = text[path]
    tests.update({p: t for p, t in text.items() if PurePosixPath(p).name == "conftest.py"})
    test_dirs = {PurePosixPath(p).parent for p in tests} - {PurePosixPath(".")}
    tests.update(
        {
            p: t
            for p, t in text.items()  # the tests' packages are the tests' too
            if PurePosixPath(p).name == "__init__.py" and PurePosixPath(p).parent in test_dirs
        }
    )
    code = {p: t for p, t in text.items() if p.endswith(".py") and p not in tests}
    gold = Patch(rec["patch"], description="gold patch")
    try:
        patches.apply(Candidate(code), gold)
    except PatchError as exc:
        raise CaseError(f"field 'patch' does not apply to the code in {repo}: {exc}") from None

    p2p, excluded = [], []
    for nodeid in rec["PASS_TO_PASS"]:
        path = split_nodeid(nodeid)[0]
        if xfail_marked(tests.get(path, ""), nodeid):
            excluded.append({"id": nodeid, "reason": XFAIL_REASON})
        else:
            p2p.append(nodeid)
    data_files = {
        p: b for p, b in tree.items() if not p.endswith(".py") and any(d in PurePosixPath(p).parents for d in test_dirs)
    }
    src_root = ["src"] if (repo / "src").is_dir() and not (repo / "src" / "__init__.py").exists() else []
    env = " · ".join(
        x
        for x in (
            f"{rec.get('repo', '')} {rec.get('version', '')}".strip(),
            f"base {str(rec.get('base_commit', ''))[:12]}" if rec.get("base_commit") else "",
            "python 3.11 · pytest",
        )
        if x
    )
    spec: dict[str, object] = {
        "name": rec["instance_id"],
        "title": (rec.get("problem_statement") or rec["instance_id"]).strip().splitlines()[0][:120],
        "environment": env,
        "code": ["**/*.py"],
        "import_roots": src_root,
        "tests": sorted(tests),
        "fail_to_pass": rec["FAIL_TO_PASS"],
        "pass_to_pass": p2p,
        "excluded": excluded,
        "patches": {"gold": {"file": "patches/gold.diff", "label": "the instance's gold patch"}},
        "notes": "Imported from a SWE-bench-style record; transcript.jsonl replays the gold patch (scripted).",
    }
    transcript = reference_transcript(
        phenomenon=f"{rec['FAIL_TO_PASS'][0]} fails on the base commit",
        evidence_ref=rec["FAIL_TO_PASS"][0],
        environment=env,
        cause="the behaviour the problem statement describes is not implemented at the base commit",
        refuted_if="with the gold patch applied, the FAIL_TO_PASS tests still fail",
        action="apply the instance's gold patch",
        acceptance=rec["FAIL_TO_PASS"],
        protective=p2p or rec["FAIL_TO_PASS"][:1],
        diff=rec["patch"],
    )
    files: dict[str, str | bytes] = {**code, **tests, **data_files}
    files.update({"patches/gold.diff": rec["patch"], "transcript.jsonl": transcript})
    return write_case(Path(folder), files, spec)

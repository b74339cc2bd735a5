"""Which required tests the independent runner can run, decided by labkit from the pristine text.

The independent runner (`harness.run_required`) runs plain test functions and methods,
`pytest.mark.parametrize` and the `tmp_path` and `monkeypatch` fixtures, without pytest.
Whether a required test is one of those is read here, from the protected test file's
pristine text, before anything runs — never from the module as the candidate's code left
it, so a candidate cannot make a test "not cross-checkable" and then forge pytest alone.
A required test that cannot be cross-checked is named on the verdict, which then says
"resolved (not cross-checked)"; a validator can require every required test cross-checked.
"""

from __future__ import annotations

import ast
import threading
from collections.abc import Mapping

__all__ = ["uncheckable"]

_FIXTURES = frozenset({"tmp_path", "monkeypatch"})
_MARKS = frozenset({"parametrize", "slow"})
# CPython 3.11 races on ast.parse from several threads (SystemError "AST constructor recursion
# depth mismatch", seen when a thread pool validates): one parse at a time.
PARSE_LOCK = threading.Lock()


def uncheckable(tests: Mapping[str, str | bytes], required: tuple[str, ...]) -> dict[str, str]:
    """node id -> why the independent runner cannot run it, for each required test it cannot."""
    trees: dict[str, ast.Module | str] = {}
    out = {}
    for nodeid in required:
        path, _, rest = nodeid.partition("::")
        if path not in trees:
            text = tests.get(path)
            try:
                with PARSE_LOCK:
                    trees[path] = ast.parse(text) if isinstance(text, str) else "not a text file"
            except SyntaxError:
                trees[path] = ""  # both runners fail to import it: nothing to confirm
        tree = trees[path]
        why = tree if isinstance(tree, str) else _why(tree, rest)
        if why:
            out[nodeid] = why
    return out


def _mark(node: ast.expr) -> str | None:
    """'parametrize' for `pytest.mark.parametrize(...)`, 'slow' for `pytest.mark.slow`; else None."""
    target = node.func if isinstance(node, ast.Call) else node
    if not isinstance(target, ast.Attribute):
        return None
    owner = target.value
    named = (isinstance(owner, ast.Attribute) and owner.attr == "mark") or (
        isinstance(owner, ast.Name) and owner.id == "mark"
    )
    return target.attr if named else None


def _argnames(node: ast.expr) -> list[str] | None:
    if not isinstance(node, ast.Call) or not node.args:
        return None
    first = node.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return [a.strip() for a in first.value.split(",") if a.strip()]
    if isinstance(first, ast.List | ast.Tuple) and all(
        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in first.elts
    ):
        return [e.value for e in first.elts]  # type: ignore[attr-defined]
    return None


def _assigns(body: list[ast.stmt], name: str) -> bool:
    return any(
        isinstance(s, ast.Assign | ast.AnnAssign)
        and any(
            isinstance(t, ast.Name) and t.id == name for t in (s.targets if isinstance(s, ast.Assign) else [s.target])
        )
        for s in body
    )


def _why(tree: ast.Module, rest: str) -> str:
    names, _, param = rest.partition("[")
    parts = names.split("::")
    if _assigns(tree.body, "pytestmark"):
        return "module-level marks need pytest"
    body: list[ast.stmt] = tree.body
    decorators: list[ast.expr] = []
    for part in parts[:-1]:
        cls = next((n for n in body if isinstance(n, ast.ClassDef) and n.name == part), None)
        if cls is None:
            return f"{part} is not a test class in the pristine text"
        if _assigns(cls.body, "pytestmark"):
            return f"class marks on {part} need pytest"
        body, decorators = cls.body, decorators + list(cls.decorator_list)
    func = next(
        (n for n in body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == parts[-1]),
        None,
    )
    if not isinstance(func, ast.FunctionDef):
        return f"{parts[-1]} is not a plain test function in the pristine text"
    decorators += func.decorator_list
    grids = []
    for d in decorators:
        mark = _mark(d)
        if mark not in _MARKS:
            return f"decorator {ast.unparse(d)[:60]} needs pytest"
        if mark == "parametrize":
            argnames = _argnames(d)
            ids = [k.value for k in getattr(d, "keywords", []) if k.arg == "ids"]
            if argnames is None or (ids and not isinstance(ids[0], ast.List | ast.Tuple)):
                return "a parametrisation labkit cannot name needs pytest"
            grids.append(argnames)
    if param and not param.endswith("]"):
        return "a truncated parametrised id (as SWE-bench's datasets have them) needs pytest's names"
    if param and len(grids) != 1:
        return "a parametrised id over several parametrisations needs pytest"
    covered = {a for g in grids for a in g} | _FIXTURES | {"self"}
    args = func.args
    wanted = [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]
    if args.vararg or args.kwarg:
        return "*args or **kwargs in a test need pytest"
    missing = sorted(set(wanted) - covered)
    return f"fixtures {missing} need pytest" if missing else ""

"""Tripwires inside a run, installed before any candidate code runs: an audit hook and an `==` check.

Standalone (stdlib only), bound next to the warm runner. `install(fd, ws, protected)` adds
an audit hook (`sys.addaudithook`: Python code cannot remove it) that writes an `alarm`
line on the report channel, once per kind, when the code under test opens the report
channel itself, reads a process's memory through /proc/<pid>/mem, walks the interpreter's
objects (`gc.get_objects`/`get_referrers`/`get_referents`), reads raw memory through
ctypes (`string_at`, `from_address`), or replaces a special method (`__init__`, `__call__`,
`__eq__`, ...) of a class of pytest, pluggy or labkit's runner. `import_hooks()` then names import-system hooks (sys.meta_path or
sys.path_hooks entries) that candidate code added. `eq` is what the independent runner
compiles `==` and `!=` in the pristine tests into: it flags an operand whose type, defined
in the candidate's code, overrides equality (a dataclass's generated `__eq__` is honest).

A tripwire raises the bar; it is not a proof. Python does not audit module attributes
(`_pytest.runner.x = ...`) or ordinary class attributes (`CallInfo.from_call = ...`): the
report plugin compares some of pytest's own functions, and the cross-check catches what
changes an outcome; code that never trips a hook is not seen.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import re
import sys
from typing import Any

_MEM = re.compile(r"^/proc/(self|thread-self|\d+)(/task/\d+)?/mem$")
_GUARDED = ("_pytest", "pytest", "pluggy", "_labkit_", "labkit")
_RAW = {"ctypes.string_at", "ctypes.wstring_at", "ctypes.cdata"}
# Python audits only special names set on a class; these change how its objects behave.
_BEHAVIOUR = {
    "__init__",
    "__new__",
    "__call__",
    "__eq__",
    "__getattribute__",
    "__getattr__",
    "__setattr__",
}
_OBJECTS = {"gc.get_objects", "gc.get_referrers", "gc.get_referents"}
_state: dict[str, Any] = {"fd": -1, "ws": "", "protected": frozenset(), "seen": set(), "hooks": ()}


def alarm(what: str) -> None:
    """One `alarm` line on the report channel (once per distinct message)."""
    if what in _state["seen"]:
        return
    _state["seen"].add(what)
    with contextlib.suppress(OSError):
        os.write(_state["fd"], (json.dumps({"k": "alarm", "what": what[:300]}) + "\n").encode())


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event == "open":
        path = args[0]
        if path == _state["fd"]:
            alarm("the code under test opened the report channel")
        elif isinstance(path, str | bytes) and _MEM.match(os.fsdecode(path)):
            alarm(f"the code under test read process memory through {os.fsdecode(path)}")
    elif event in _OBJECTS:
        alarm(f"the code under test walked the interpreter's objects ({event})")
    elif event in _RAW:
        alarm(f"the code under test read raw memory ({event})")
    elif event == "object.__setattr__" and isinstance(args[0], type) and args[1] in _BEHAVIOUR:
        module = getattr(args[0], "__module__", "") or ""
        if module.startswith(_GUARDED):
            alarm(f"the code under test set {module}.{args[0].__qualname__}.{args[1]}")


def install(fd: int, ws: str, protected: frozenset[str]) -> None:
    """Start watching (call it last, just before the run's own code imports anything)."""
    _state.update(
        fd=fd, ws=ws.rstrip("/") + "/", protected=protected, hooks=(list(sys.meta_path), list(sys.path_hooks))
    )
    sys.addaudithook(_hook)


def _candidates(obj: object) -> str:
    """The candidate's file that defines `obj` (a class or function), or ""."""
    module = sys.modules.get(getattr(obj, "__module__", "") or "")
    path = getattr(module, "__file__", None) or ""
    if not path.startswith(_state["ws"]):
        return ""
    rel = path[len(_state["ws"]) :]
    return "" if rel in _state["protected"] else rel


def import_hooks() -> None:
    """Alarm for each import-system hook the candidate's code added since `install`."""
    before_meta, before_paths = _state["hooks"]
    for entry in [*sys.meta_path, *sys.path_hooks]:
        if any(entry is e for e in [*before_meta, *before_paths]):
            continue
        where = _candidates(entry if isinstance(entry, type) else type(entry)) or _candidates(entry)
        if where:
            alarm(f"the code under test added an import hook {entry!r} (from {where})")


def _overrides_eq(x: object) -> str:
    cls = type(x)
    owner = next((c for c in cls.__mro__ if "__eq__" in c.__dict__), object)
    where = _candidates(owner)
    if not where:
        return ""
    eq = owner.__dict__["__eq__"]
    code = getattr(eq, "__code__", None)
    if hasattr(owner, "__dataclass_fields__") and code is not None and code.co_filename == "<string>":
        return ""  # dataclass-generated: compares fields
    return f"{cls.__qualname__} (from {where}) overrides == : {repr(x)[:80]}"


def eq(a: object, b: object, negate: bool, where: str) -> bool:
    """`a == b` (or `!=`), flagging an operand from the candidate's code that overrides ==."""
    for x in (a, b):
        why = _overrides_eq(x)
        if why:
            alarm(f"a comparison in required test {where} met a result whose type {why}")
    return bool(a != b) if negate else bool(a == b)


class _Equalities(ast.NodeTransformer):
    def __init__(self, where: str) -> None:
        self.where = where

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        if len(node.ops) != 1 or not isinstance(node.ops[0], ast.Eq | ast.NotEq):
            return node
        call = ast.Call(
            ast.Name("__labkit_eq__", ast.Load()),
            [
                node.left,
                node.comparators[0],
                ast.Constant(isinstance(node.ops[0], ast.NotEq)),
                ast.Constant(self.where),
            ],
            [],
        )
        return ast.copy_location(call, node)


def compile_watched(text: str, filename: str, where: str) -> Any:
    """The pristine test text compiled with every `==`/`!=` going through `eq`."""
    tree = _Equalities(where).visit(ast.parse(text, filename))
    return compile(ast.fix_missing_locations(tree), filename, "exec")

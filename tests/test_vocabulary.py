"""No event kind or role is a bare string literal outside labkit/record/events.py (issue #10's rule).

The scan reads every module of labkit with `ast` and flags a string literal (a constant,
an f-string, or either inside a conditional expression) passed as an event's role or kind
to a ledger writer or a paid action:

- `<x>.record(run_id, round, role, kind, ...)` and `<x>._record(kind, ...)` (ledger, budget);
- `<x>.log(...)` (the engine's Recorder and the search's log);
- `<x>.paid(kind, ...)` / `<x>.reserve(kind, ...)` / `<x>.charge(kind, ...)` (a paid kind
  becomes the budget event's kind);
- a comparison of `<x>.kind` / `<x>.role` with a literal that is a Kind or Role value (a
  reader matching a kind by its bare string).
"""

from __future__ import annotations

import ast
from pathlib import Path

import labkit
from labkit.record.events import Kind, Role

ROOT = Path(labkit.__file__).parent
EXEMPT = {ROOT / "record" / "events.py"}
VALUES = {str(k) for k in Kind} | {str(r) for r in Role}
# which positional arguments hold a role or kind, per method name
POSITIONS = {"record": (2, 3), "_record": (0,), "log": (0, 1, 2, 3), "paid": (0,), "reserve": (0,),
             "charge": (0,)}  # fmt: skip


def _literals(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return [ast.unparse(node)]
    if isinstance(node, ast.IfExp):
        return _literals(node.body) + _literals(node.orelse)
    if isinstance(node, ast.BoolOp):
        return [s for v in node.values for s in _literals(v)]
    return []


def bare_kinds(source: str, name: str = "<source>") -> list[str]:
    """Every place in `source` where an event kind or role is a bare string literal."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in POSITIONS:
            args = [a for i, a in enumerate(node.args) if i in POSITIONS[node.func.attr]]
            args += [k.value for k in node.keywords if k.arg in ("kind", "role")]
            for a in args:
                for lit in _literals(a):
                    out.append(f"{name}:{node.lineno}: .{node.func.attr}(...) with literal {lit!r}")
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(isinstance(s, ast.Attribute) and s.attr in ("kind", "role") for s in sides):
                for s in sides:
                    elts = s.elts if isinstance(s, ast.Tuple | ast.List | ast.Set) else [s]
                    for e in elts:
                        for lit in _literals(e):
                            if lit in VALUES:
                                out.append(f"{name}:{node.lineno}: compares .kind/.role with {lit!r}")
    return out


def test_the_scan_finds_bare_kinds_in_writers_and_readers() -> None:
    src = (
        "ledger.record(run, 0, 'search', 'expand', detail={})\n"
        "ledger.record(run, 0, Role.CONTROL, 'retry' if a else Kind.ATTEMPT)\n"
        "self.log('decision', rnd, where=w)\n"
        "budget.paid('execute', op, round=1)\n"
        "ok = e.role == 'search' and e.kind in ('branch', 'seal')\n"
        "fine = p.kind == 'wrong'; ledger.record(run_id, 0, Role.SEARCH, Kind.EXPAND)\n"
        "cs.record({'a': 'failed'})\n"
    )
    found = bare_kinds(src)
    assert len(found) == 8, found
    assert not any(":6:" in f or ":7:" in f for f in found)


def test_no_bare_event_kind_or_role_in_labkit() -> None:
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        if path not in EXEMPT:
            found += bare_kinds(path.read_text(), str(path.relative_to(ROOT.parent)))
    assert found == [], "\n".join(found)

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


# -- the vocabulary is enforced on writing (labkit.record.vocabulary) --------------------------


def test_the_ledger_refuses_an_undeclared_field_naming_role_kind_and_field() -> None:
    import pytest

    from labkit.core.errors import LedgerError
    from labkit.record.ledger import Ledger

    led = Ledger()
    with pytest.raises(LedgerError, match=r"'verify' events by role 'validator' \(VerifyDetail\) .*\['colour'\]"):
        led.record("r", 0, Role.VALIDATOR, Kind.VERIFY, detail={"resolved": True, "colour": "red"})
    with pytest.raises(LedgerError, match=r"record_many item 1: .*'decide' events by role 'decision'.*\['hidden'\]"):
        led.record_many(
            [
                dict(run_id="r", round=0, role=Role.DECISION, kind=Kind.DECIDE, detail={"decision": "keep"}),
                dict(run_id="r", round=0, role=Role.DECISION, kind=Kind.DECIDE, detail={"hidden": True}),
            ]
        )
    with pytest.raises(LedgerError, match="declares no 'expand' events by role 'scorer'"):
        led.record("r", 0, Role.SCORER, Kind.EXPAND)  # a pair nobody declares, even with no detail
    with pytest.raises(LedgerError, match="declares no 'verify' events by role 'judge'"):
        led.record("r", 0, "judge", Kind.VERIFY)  # a model-backed role writes model calls only
    assert len(led) == 0  # nothing was written
    # declared: a model-backed role's call, the budget under any paid kind, an engine event
    led.record("r", 0, "judge", Kind.GENERATE, detail={"model": "labkit/scripted", "cached": False, "usd": None})
    led.record("r", 0, Role.BUDGET, "x", detail={"status": "reserved", "reservation": 1, "short": []})
    led.record("r", 0, Role.VALIDATOR, Kind.VERIFY, detail={"resolved": True, "case": "c", "suite": "s"})
    assert len(led) == 3


def test_a_kind_whose_meaning_depends_on_its_writer_has_one_shape_per_role() -> None:
    from labkit.record.vocabulary import undeclared

    # a checkpointed sequence's step (DECISION) is not the control plane's restore point (CONTROL)
    assert undeclared(Role.DECISION, Kind.CHECKPOINT, {"step": 1, "green": True, "code_version": "v"}) == [
        "code_version"
    ]
    assert undeclared(Role.CONTROL, Kind.CHECKPOINT, {"code_version": "v", "pending": [], "green": True}) == ["green"]
    # the engine's proposal (REFLECTOR) is not a tool task's bound reflection (TOOL_REFLECTOR)
    assert undeclared(Role.REFLECTOR, Kind.REFLECT, {"children": 2, "next_trial": "x"}) == ["next_trial"]
    assert undeclared(Role.TOOL_REFLECTOR, Kind.REFLECT, {"next_trial": "x", "children": 2}) == ["children"]
    # the engine's model-error note (REFLECTOR) is not the gateway's record of a failed call
    assert undeclared(Role.REFLECTOR, Kind.ERROR, {"error": "ModelTimeout: slow", "model": "m"}) == ["model"]
    assert undeclared(Role.MODEL, Kind.ERROR, {"error": "ModelTimeout", "message": "slow", "model": "m"}) == []


def test_committed_ledgers_still_read_though_their_arms_events_carry_fields_no_longer_written() -> None:
    """Enforcement is on writing: data/arms/simulated_default.sqlite was recorded when the arms
    merge stamped every event with arm, seed and job_status (now read from the run id and the
    stops); it still opens, reads, and gives the same per-job status from its stops."""
    from labkit.experiments.arms import arm_metrics as metrics
    from labkit.record.ledger import Ledger
    from labkit.record.vocabulary import undeclared

    led = Ledger(ROOT.parent / "data" / "arms" / "smollm2_repair.sqlite", read_only=True)
    events = led.events()
    old = [e for e in events if undeclared(e.role, e.kind, e.detail)]
    assert old and {"arm", "seed", "job_status"} <= {k for e in old for k in undeclared(e.role, e.kind, e.detail)}
    stamped = {e.run_id: e.detail["job_status"] for e in events if "job_status" in e.detail}
    rows = metrics.runs(led)
    assert dict(zip(rows["run"], rows["status"], strict=True)) == stamped


def _declared_calls(source: str, name: str, scanned: list[str] | None = None) -> list[str]:
    """Each `<x>.record(run, round, Role.R, Kind.K, ..., detail={...})`, `<rec>.log(task, round,
    Role.R, Kind.K, ..., detail={...})` and search `<run>.log(Kind.K, round, key=...)` in `source`
    whose (role, kind) or literal detail keys the vocabulary does not declare."""
    from labkit.record.vocabulary import undeclared

    def member(node: ast.AST, enum: str) -> str | None:
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == enum:
            return str((Kind if enum == "Kind" else Role)[node.attr])
        return None

    out = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        keys: list[str] = []
        if node.func.attr in ("record", "log") and len(node.args) >= 4:
            role, kind = member(node.args[2], "Role"), member(node.args[3], "Kind")
            detail = next((k.value for k in node.keywords if k.arg == "detail"), None)
            if isinstance(detail, ast.Dict):
                keys = [k.value for k in detail.keys if isinstance(k, ast.Constant)]
        elif node.func.attr == "log" and node.args and member(node.args[0], "Kind"):
            role, kind = str(Role.SEARCH), member(node.args[0], "Kind")
            keys = [k.arg for k in node.keywords if k.arg]
        else:
            continue
        if role is None or kind is None:
            continue
        if scanned is not None:
            scanned.append(f"{name}:{node.lineno}")
        extra = undeclared(role, kind, dict.fromkeys(keys))
        if extra:
            out.append(f"{name}:{node.lineno}: {role}/{kind} writes undeclared {extra}")
    return out


def test_every_event_labkit_writes_is_declared() -> None:
    """A scan of every writer whose role and kind are spelled `Role.X` / `Kind.Y` (and of its
    literal detail keys): the static half of the check the ledger makes on every append."""
    found: list[str] = []
    scanned: list[str] = []
    for path in sorted(ROOT.rglob("*.py")):
        found += _declared_calls(path.read_text(), str(path.relative_to(ROOT.parent)), scanned)
    assert len(scanned) >= 40 and found == [], "\n".join(found)  # 45 writer calls when written
    # the scan does see an undeclared writer
    bad = (
        "rec.log(task, 0, Role.DECISION, Kind.CHECKPOINT, detail={'step': 1, 'pending': []})\n"
        "run.log(Kind.EXPAND, 1, state='s', colour='red')\nled.record(r, 0, Role.SCORER, Kind.EXPAND)\n"
    )
    assert [f.split(": ", 1)[1] for f in _declared_calls(bad, "x")] == [
        "decision/checkpoint writes undeclared ['pending']",
        "search/expand writes undeclared ['colour']",
        "scorer/expand writes undeclared ['<scorer/expand is not declared>']",
    ]

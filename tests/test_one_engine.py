"""One engine (issue 26): no loop outside the engine validates candidates or decides keep/rollback.

Every module under `labkit/` is parsed with `ast`. A *validating call* is a call of the grading
primitives or the engine's validation and decision steps, by the names they really have:

- `Checker.check / recheck / warm`, `Recorder.check / verified / confirm`, `SealedCheckSet.confirm`,
  `Validator.retest` (method names `check`, `recheck`, `warm`, `verified`, `confirm`, `retest`);
- `Validator.run`: a `.run(...)` whose receiver names a validator (`validator.run`,
  `Validator().run`, `checker.validator.run`); a bare `.run` is too common to count;
- the decisions `decide(...)`, `assess(...)` and the flakiness re-check `rerun(...)`.

A *loop* is a `for`, `while` or comprehension. A call counts when it sits inside a loop, directly
or through a function or method of the same module that (transitively) makes one: the module's
own helpers are resolved by name (`f(...)` -> a module-level function `f`; `self.f(...)` -> a method
of the enclosing class; `x.f(...)` -> a method of some class in the module, unless `f` is also a
method of a builtin container such as `append`, which cannot be told apart without types).
Calls into other modules are not followed: running the engine (`engine.run`) in a loop over seeds
or arms is the engine's own loop, not a second one.

The engine's own modules (`labkit/loop/engine/`) and the grading primitives themselves are exempt.
A module that validates in batch and never decides may be allowed, with its reason, in ALLOWED;
modules other helpers are moving onto `engine.run` right now are in PENDING (emptied when they
merge); modules still running their own loop are in OWN_LOOP, each with what is left to do.
Every entry of ALLOWED and OWN_LOOP must still be needed (the scan still flags it), so the lists
only shrink.

A second check reads the strategy seam: a strategy only proposes, so no `propose`, `reflect` or
`act` method outside the engine may make a validating call (directly or through its module's own
helpers), loop or not. STRATEGY_VALIDATES names what still does, with what is left.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "labkit"

VALIDATING_METHODS = frozenset({"check", "recheck", "warm", "verified", "confirm", "retest"})
DECIDING_FUNCTIONS = frozenset({"decide", "assess", "rerun"})
LOOPS = (
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)
# method names of builtin containers: `out.append(...)` is not resolved to a module's own `append`
BUILTIN_METHODS = frozenset(n for t in (list, dict, set, frozenset, tuple, str, bytes) for n in dir(t))

ENGINE = ("loop/engine/",)  # the engine's own modules: the one loop
GRADING_PRIMITIVES = {
    "grading/verdicts.py": "Checker.warm/recheck are the batch validation and flakiness primitives",
    "grading/sealed.py": "SealedCheckSet.confirm is the one sealed confirmation",
    "grading/validator.py": "the validator itself",
}

# Batch validation that never decides keep/rollback (a measurement), with why.
ALLOWED = {
    "experiments/published/regrade.py": "re-grades published runs' final solutions; never decides, never iterates a candidate",
    "experiments/repair.py": "probes each case's original for flakiness (Checker.recheck) before any run; decides nothing",
    "experiments/memory/mutants.py": "warms the verdict cache for a batch of mutants (Checker.warm); a measurement, no decision",
    "experiments/memory/unified.py": "scores each stored skill once on the hidden tests after the engine's runs; no decision",
    "grading/differential_build.py": "builds a differential suite by running reference solutions; a grading step, no candidate loop",
    "experiments/arms/wellformed.py": "validates each case's start once to build the situation a well-formedness count asks with; no loop of repairs",
    "loop/control/test_change.py": "after the gate accepts a test change, re-validates each candidate scored under the old suite once "
    "on the new one (how many verdicts the change flips); keeps or rolls back nothing",
}

# moving onto engine.run (issue 26): emptied as that work lands. (Self-critique and best-of-N run on
# engine.run; the tool task pays and records through the engine's Recorder and stops by its rules.)
PENDING: dict[str, str] = {}

# Still a loop of their own that validates and decides: not done yet (issue 26), each with what is left.
OWN_LOOP: dict[str, str] = {}

STRATEGY_METHODS = ("propose", "reflect", "act")
# A strategy that still validates inside its proposal: not done yet (issue 26).
STRATEGY_VALIDATES: dict[str, str] = {}


def _callee(call: ast.Call) -> str | None:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def _direct(call: ast.Call) -> bool:
    f = call.func
    if isinstance(f, ast.Name):
        return f.id in DECIDING_FUNCTIONS
    if isinstance(f, ast.Attribute):
        if f.attr in VALIDATING_METHODS or f.attr in DECIDING_FUNCTIONS:
            return True
        return f.attr == "run" and "validator" in ast.unparse(f.value).lower()
    return False


class _Module:
    """The module's own functions and methods, and which of them (transitively) validate."""

    def __init__(self, tree: ast.Module) -> None:
        self.functions: dict[str, ast.AST] = {}
        self.methods: dict[str, dict[str, ast.AST]] = {}  # class -> name -> def
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions[node.name] = node
            elif isinstance(node, ast.ClassDef):
                self.methods[node.name] = {
                    d.name: d for d in node.body if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef))
                }
        self.validating: set[tuple[str, str]] = set()  # ("", function) or (class, method)
        changed = True
        while changed:
            changed = False
            for key, node in self._defs():
                if key not in self.validating and any(
                    isinstance(c, ast.Call) and self.validates(c, key[0]) for c in ast.walk(node)
                ):
                    self.validating.add(key)
                    changed = True

    def _defs(self) -> list[tuple[tuple[str, str], ast.AST]]:
        out = [(("", n), d) for n, d in self.functions.items()]
        return out + [((c, n), d) for c, ms in self.methods.items() for n, d in ms.items()]

    def validates(self, call: ast.Call, cls: str) -> bool:
        if _direct(call):
            return True
        f, name = call.func, _callee(call)
        if isinstance(f, ast.Name):
            return ("", f.id) in self.validating
        if not isinstance(f, ast.Attribute) or name is None:
            return False
        if isinstance(f.value, ast.Name) and f.value.id == "self" and cls:
            return (cls, name) in self.validating
        if name in BUILTIN_METHODS:
            return False
        return any((c, name) in self.validating for c in self.methods)


def flagged(source: str) -> list[tuple[int, str]]:
    """(line, call) for every validating call inside a loop in `source`."""
    tree = ast.parse(source)
    mod = _Module(tree)
    out: list[tuple[int, str]] = []

    def walk(node: ast.AST, cls: str, in_loop: bool) -> None:
        for child in ast.iter_child_nodes(node):
            here = child.name if isinstance(child, ast.ClassDef) else cls
            if isinstance(child, ast.Call) and in_loop and mod.validates(child, cls):
                out.append((child.lineno, ast.unparse(child.func)))
            walk(child, here, in_loop or isinstance(child, LOOPS))

    walk(tree, "", False)
    return out


def _scan() -> dict[str, list[tuple[int, str]]]:
    return {rel: hits for rel, source in _modules() if (hits := flagged(source))}


def validating_strategies(source: str) -> list[tuple[str, str]]:
    """(class, method) for every strategy method in `source` that makes a validating call."""
    mod = _Module(ast.parse(source))
    return [(c, m) for c, ms in mod.methods.items() for m in STRATEGY_METHODS if m in ms and (c, m) in mod.validating]


def _modules() -> list[tuple[str, str]]:
    out = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if not (rel.startswith(ENGINE) or rel in GRADING_PRIMITIVES):
            out.append((rel, path.read_text(encoding="utf-8")))
    return out


@pytest.fixture(scope="module")
def scan() -> dict[str, list[tuple[int, str]]]:
    return _scan()


def test_no_loop_outside_the_engine_validates_or_decides(
    scan: dict[str, list[tuple[int, str]]],
) -> None:
    excused = ALLOWED.keys() | PENDING.keys() | OWN_LOOP.keys()
    bad = {m: hits for m, hits in scan.items() if m not in excused}
    assert not bad, f"loops outside the engine that validate or decide (route them through engine.run): {bad}"


def test_every_exemption_is_still_needed(scan: dict[str, list[tuple[int, str]]]) -> None:
    stale = sorted(m for m in ALLOWED.keys() | OWN_LOOP.keys() if m not in scan)
    assert not stale, f"no longer flagged: remove from ALLOWED / OWN_LOOP: {stale}"
    for where in (ALLOWED, PENDING, OWN_LOOP, GRADING_PRIMITIVES):
        assert all((ROOT / m).is_file() and why.strip() for m, why in where.items())


SYNTHETIC = """
from labkit.loop.engine.decide import decide


def direct(cands, checker, suite):
    return [checker.check(c, suite) for c in cands]


class Loop:
    def step(self, rec, task, c):
        return self.rec.verified(task, 1, c, rec.check(task, 1, c), None, "x")

    def go(self, cands):
        out = []
        for c in cands:
            out.append(self.step(None, None, c))
        return out


def by_hand(validator, before, cands, suite):
    while cands:
        after = validator.retest(before, cands.pop(), suite)
        if decide(before, after).decision:
            return after
    return Validator().run(cands[0], suite)  # not in a loop


def once(checker, c, suite):
    return checker.check(c, suite)  # not in a loop


def plain(items):
    out = []
    for x in items:
        out.append(x)  # a list's append, not a validation
    return [once for _ in items]
"""


def test_the_scan_finds_validation_in_loops_and_nothing_else() -> None:
    got = {call for _, call in flagged(SYNTHETIC)}
    assert got == {"checker.check", "self.step", "validator.retest", "decide"}
    assert flagged("def f(v, c, s):\n    return v.run(c, s)\n") == []
    assert flagged("for c in cs:\n    engine.run(c)\n") == []  # the engine's own loop
    assert flagged("for c in cs:\n    self_validator.run(c)\n") == [(2, "self_validator.run")]


def test_strategies_only_propose() -> None:
    found = {rel: hits for rel, source in _modules() if (hits := validating_strategies(source))}
    assert found.keys() == STRATEGY_VALIDATES.keys(), (
        f"strategy methods that validate or decide (the engine does that): {found}; "
        f"listed but no longer found: {sorted(STRATEGY_VALIDATES.keys() - found.keys())}"
    )
    synthetic = validating_strategies(
        "class S:\n"
        "    def propose(self, s):\n"
        "        return self._judge(s)\n"
        "    def _judge(self, s):\n"
        "        return Validator().run(s.candidate, s.suite)\n"
        "class T:\n"
        "    def propose(self, s):\n"
        "        return self.checker.lookup(s.candidate, s.suite)  # a read of the engine's verdict\n"
    )
    assert synthetic == [("S", "propose")]

"""Wrong answers for a HumanEval problem that are not strawmen: single-site mutants of its
canonical solution (a comparison flipped, an operator swapped, a constant off by one, `and`
for `or`, an `if` negated), kept only when the problem's visible examples cleanly reject them
(not by running into the wall limit, not in a run quarantined by an integrity alarm) —
measured by a real validation, never assumed. They give the Reflexion experiments problems with many plausible
wrong options, so a buffer of reflections grows long enough for its budget to matter.
"""

from __future__ import annotations

import ast
import copy
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from labkit.core.types import Candidate

if TYPE_CHECKING:
    from labkit.core.types import Verdict
    from labkit.experiments.arms.suites import ArmCase
    from labkit.grading.verdicts import Checker

__all__ = ["entry_point", "failing_mutants", "mutants"]

MODULE = "solution.py"
_CMP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
}  # fmt: skip
_BIN: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Add, ast.FloorDiv: ast.Mult, ast.Mod: ast.FloorDiv,
}  # fmt: skip
_SYM = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=", ast.Add: "+",
        ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%", ast.And: "and", ast.Or: "or"}  # fmt: skip


def _sites(fn: ast.FunctionDef) -> Iterator[tuple[ast.AST, str, str]]:
    """(node, variant, what the mutation does) for every mutable site in the function, in walk order."""
    for node in ast.walk(fn):
        if isinstance(node, ast.Compare) and type(node.ops[0]) in _CMP:
            yield node, "cmp", f"{_SYM[type(node.ops[0])]} → {_SYM[_CMP[type(node.ops[0])]]}"
        elif isinstance(node, ast.BinOp) and type(node.op) in _BIN:
            yield node, "bin", f"{_SYM[type(node.op)]} → {_SYM[_BIN[type(node.op)]]}"
        elif isinstance(node, ast.BoolOp):
            yield node, "bool", f"{_SYM[type(node.op)]} → {'or' if isinstance(node.op, ast.And) else 'and'}"
        elif isinstance(node, ast.Constant) and type(node.value) is int:
            yield node, "+1", f"{node.value} → {node.value + 1}"
            yield node, "-1", f"{node.value} → {node.value - 1}"
        elif isinstance(node, ast.If):  # not a `while`: a negated loop condition mostly hangs
            yield node, "not", "condition negated"


def _mutate(node: ast.AST, variant: str) -> None:
    if isinstance(node, ast.Compare):
        node.ops[0] = _CMP[type(node.ops[0])]()
    elif isinstance(node, ast.BinOp):
        node.op = _BIN[type(node.op)]()
    elif isinstance(node, ast.BoolOp):
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    elif isinstance(node, ast.Constant) and type(node.value) is int:
        node.value = node.value + (1 if variant == "+1" else -1)
    elif isinstance(node, ast.If):
        node.test = ast.UnaryOp(ast.Not(), node.test)


def mutants(source: str, entry: str) -> list[tuple[str, str]]:
    """(description, mutated source) for each single-site mutant of `entry` in `source`, in source order."""
    tree = ast.parse(source)
    fns = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == entry]
    if not fns:
        return []
    count = sum(1 for _ in _sites(fns[0]))
    out = []
    for k in range(count):
        mutant = copy.deepcopy(tree)
        fn = next(n for n in mutant.body if isinstance(n, ast.FunctionDef) and n.name == entry)
        node, variant, what = list(_sites(fn))[k]
        _mutate(node, variant)
        text = ast.unparse(mutant) + "\n"
        if text != ast.unparse(tree) + "\n":
            out.append((what, text))
    return out


def entry_point(case: ArmCase) -> str:
    """The function the problem's hidden suite calls `check` on ("" when there is none)."""
    hidden = "".join(str(t) for t in case.task.hidden.tests.values()) if case.task.hidden else ""
    found = re.search(r"check\(_?solution\.(\w+)\)", hidden)  # the importer's module alias: `_solution`
    return found.group(1) if found else ""


def failing_mutants(case: ArmCase, checker: Checker, limit: int) -> list[tuple[str, Candidate]]:
    """Up to `limit` distinct mutants of the case's canonical solution that its visible suite rejects
    (each validated for real), named "mutant<k> (<what>)"."""
    source = case.states["canonical"][0].files[MODULE]
    entry = entry_point(case)
    seen: set[str] = set()
    named: list[tuple[str, Candidate]] = []
    for k, (what, text) in enumerate(mutants(source, entry), 1):
        if text not in seen:
            seen.add(text)
            named.append((f"mutant{k} ({what})", Candidate({MODULE: text}, label=f"mutant{k} ({what})")))
    out: list[tuple[str, Candidate]] = []
    suite, start = case.task.suite, 0
    while len(out) < limit and start < len(named):
        # validate (two workers) only as many as are still wanted: the kept ones are the first
        # `limit` clean rejections in source order whatever the batch size
        batch = named[start : start + max(2, limit - len(out))]
        start += len(batch)
        checker.warm([(c, suite) for _, c in batch], workers=2)
        # only a clean rejection counts: a mutant killed at the wall limit (it loops) or whose run was
        # quarantined (an integrity alarm, e.g. the process died mid-report) is left out — its verdict
        # is not a measurement, and the verdict cache does not keep it, so every later pick (or a second
        # look here) would re-run the sandbox, up to the whole wall limit each time. What the cache
        # holds after `warm` is exactly the clean verdicts: read them, never re-validate.
        verdicts = [(n, c, checker.cache.get(checker.key(c, suite))) for n, c in batch]
        out += [(n, c) for n, c, v in verdicts if v is not None and not v.resolved and _clean(v)]
    return out[:limit]


def _clean(verdict: Verdict) -> bool:
    """A verdict the cache keeps and that measured the tests: no alarm, no timeout, no wall-limit kill."""
    hung = any("wall limit" in f.message for f in verdict.evidence.failures)
    return not verdict.quarantined and not verdict.evidence.timed_out and not hung

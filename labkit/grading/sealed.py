"""Search case material: dev checks with severities, a sealed final check set, a cost model.

`SealedCheckSet` is the final confirmation's grader (the only one: the engine's
`Recorder.confirm` runs a case's hidden suite through it). It runs the sealed final tests on a
candidate and lets only pass/fail out: no failing test names, no messages, no stderr —
so its result can never become a repair context (seed 002 §3–§4). Its digest names it.

`load_search_case` reads a case directory (see data/api_change/README.md and the README's
"Search" section): the ordinary case (start, dev suite, patches) plus `final` (pattern and
required node ids of the sealed set), `costs` (declared cost units per action kind), and
optionally `severity` per dev check (else each test's `@pytest.mark.severity("high")`
mark, else "medium") and `route_order` (how the case's routes are offered: "label", the
default, "size" or "listed"; never an accident of how case.json happens to list them).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import cast

from labkit.core.types import Candidate
from labkit.grading.acceptance import AcceptanceSuite
from labkit.grading.cases import Case, CaseError, load_case
from labkit.grading.checkset import SEVERITIES, CheckSet, Severity
from labkit.grading.validator import Validator

__all__ = ["SealedCheckSet", "SearchCase", "load_search_case", "severity_marks"]


class SealedCheckSet:
    """The final check set: `confirm(candidate)` returns a bool and nothing else."""

    def __init__(self, suite: AcceptanceSuite, validator: Validator) -> None:
        self._suite = suite
        self._validator = validator
        self.runs = 0

    @property
    def digest(self) -> str:
        return self._suite.digest

    def __repr__(self) -> str:
        return f"SealedCheckSet(digest={self.digest}, runs={self.runs})"

    def confirm(self, candidate: Candidate) -> bool:
        """True iff every sealed check passes on `candidate` with no integrity alarm."""
        self.runs += 1
        return self._validator.run(candidate, self._suite).resolved


@dataclass(frozen=True)
class SearchCase:
    """A Case seen as a search: its dev checks with severities, derived once from the Case.

    Everything else is the Case's own: the sealed final tests are its hidden suite (loaded by
    `load_case` from case.json's `final`), the cost table and route order its typed spec.
    """

    case: Case
    checks: CheckSet  # the dev suite's required checks, versioned, with severities

    def __post_init__(self) -> None:
        for key in ("final", "costs"):
            if getattr(self.case.spec, key) is None:
                raise CaseError(f"{self.case.root / 'case.json'}: a search case needs {key!r}")

    @property
    def suite(self) -> AcceptanceSuite:
        return self.case.suite

    @property
    def final(self) -> AcceptanceSuite:
        """The sealed final tests (confirmed through SealedCheckSet, by the engine's
        Recorder.confirm for the search or by a caller outside it)."""
        if self.case.hidden is None:  # load_case loads `final` as the hidden suite
            raise CaseError(f"search case {self.case.name!r} has no sealed final tests")
        return self.case.hidden

    @property
    def costs(self) -> Mapping[str, float]:
        return MappingProxyType({k: float(v) for k, v in (self.case.spec.costs or {}).items()})

    @property
    def route_order(self) -> str:
        return self.case.spec.route_order

    def sealed(self, validator: Validator) -> SealedCheckSet:
        return SealedCheckSet(self.final, validator)


def load_search_case(path: str | Path) -> SearchCase:
    case = load_case(path)
    marks = severity_marks(case.suite.tests)  # a parametrised id takes its function's mark
    severity = {n: marks[n.split("[", 1)[0]] for n in case.suite.required if n.split("[", 1)[0] in marks}
    severity.update(cast(Mapping[str, Severity], case.spec.severity))
    return SearchCase(case, CheckSet.from_tests(case.name + " dev", case.suite.tests, case.suite.required, severity))


def severity_marks(tests: Mapping[str, str | bytes]) -> dict[str, Severity]:
    """Node id -> severity from `@pytest.mark.severity("high")` on test functions (and on the
    classes holding them) in the suite's files. A mark naming no known severity is a CaseError."""
    found: dict[str, Severity] = {}

    def mark(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, where: str) -> str | None:
        for dec in node.decorator_list:
            if (
                isinstance(dec, ast.Call)
                and isinstance(dec.func, ast.Attribute)
                and dec.func.attr == "severity"
                and dec.args
                and isinstance(dec.args[0], ast.Constant)
            ):
                value = dec.args[0].value
                if value not in SEVERITIES:
                    raise CaseError(f"{where}: @pytest.mark.severity({value!r}) is not one of {SEVERITIES}")
                return str(value)
        return None

    for path, text in tests.items():
        if not path.endswith(".py") or isinstance(text, bytes):
            continue
        try:
            body = ast.parse(text).body
        except SyntaxError:
            continue  # the validator reports it; severities default
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                sev = mark(node, f"{path}::{node.name}")
                if sev:
                    found[f"{path}::{node.name}"] = cast(Severity, sev)
            elif isinstance(node, ast.ClassDef):
                outer = mark(node, f"{path}::{node.name}")
                for item in node.body:
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                        sev = mark(item, f"{path}::{node.name}::{item.name}") or outer
                        if sev:
                            found[f"{path}::{node.name}::{item.name}"] = cast(Severity, sev)
    return found

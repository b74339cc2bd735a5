"""Search case material: dev checks with severities, a sealed final check set, a cost model.

`SealedCheckSet` is the final confirmation's grader. It runs the sealed final tests on a
candidate and lets only pass/fail out: no failing test names, no messages, no stderr —
so its result can never become a repair context (seed 002 §3–§4). Its digest names it.

`load_search_case` reads a case directory (see data/api_change/README.md): the ordinary
case (start, dev suite, patches) plus `severity` per dev check, `final` (pattern and
required node ids of the sealed set) and `costs` (declared cost units per action kind).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import cast

from labkit.core.types import Candidate
from labkit.grading.acceptance import AcceptanceSuite
from labkit.grading.cases import Case, CaseError, load_case
from labkit.grading.checkset import CheckSet, Severity
from labkit.grading.validator import Validator

__all__ = ["COST_KINDS", "SealedCheckSet", "SearchCase", "load_search_case"]

COST_KINDS = ("generate", "execute", "verify", "confirm")


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
        return self._validator.run(candidate, self._suite, use_cache=False).resolved


@dataclass(frozen=True)
class SearchCase:
    case: Case
    checks: CheckSet  # the dev suite's required checks, versioned, with severities
    final: AcceptanceSuite  # the sealed final tests: the case's hidden suite (the engine's
    # Recorder.confirm runs it for the search; SealedCheckSet for a caller outside the engine)
    costs: Mapping[str, float]

    @property
    def suite(self) -> AcceptanceSuite:
        return self.case.suite

    def sealed(self, validator: Validator) -> SealedCheckSet:
        return SealedCheckSet(self.final, validator)


def load_search_case(path: str | Path) -> SearchCase:
    case = load_case(path)
    meta = json.loads((case.root / "case.json").read_text())
    for key in ("severity", "final", "costs"):
        if key not in meta:
            raise CaseError(f"{case.root / 'case.json'}: a search case needs {key!r}")
    costs = meta["costs"]
    missing = [k for k in COST_KINDS if k not in costs]
    if missing:
        raise CaseError(f"{case.root / 'case.json'}: costs lacks {missing} (needs {COST_KINDS})")
    bad = {k: v for k, v in costs.items() if not isinstance(v, int | float) or v < 0}
    if bad:
        raise CaseError(f"{case.root / 'case.json'}: costs must be numbers >= 0, got {bad}")
    checks = CheckSet.from_tests(
        case.name + " dev",
        case.suite.tests,
        case.suite.required,
        cast(Mapping[str, Severity], meta["severity"]),
    )
    final = AcceptanceSuite.from_dir(
        case.root,
        name=case.name + " final (sealed)",
        fail_to_pass=meta["final"]["required"],
        pass_to_pass=(),
        pattern=meta["final"]["pattern"],
    )
    # The sealed set is the case's hidden suite: scored, never shown to a strategy.
    case = replace(case, hidden=final)
    return SearchCase(case, checks, final, MappingProxyType({k: float(v) for k, v in costs.items()}))

"""The nouns of frontier search: states, limits, costs, sealed candidates, records, results.

A state is keyed on (artifact digest, environment, hypothesis) — never on a chat
summary — so two routes reaching the same files under different hypotheses are two
states, and the same route re-proposed is one. A sealed candidate is immutable: it holds
the candidate itself, the digest of the evidence that verified it, and a seal digest
over both; a later change is a different candidate and `Sealed.covers` says no.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from labkit.core.errors import SearchError
from labkit.core.types import Candidate, Verdict, digest
from labkit.grading.checkset import CheckRun

__all__ = [
    "Branch",
    "Costs",
    "Expansion",
    "SearchLimits",
    "SearchResult",
    "Sealed",
    "State",
    "WinnerRule",
    "smallest_change",
]


@dataclass(frozen=True)
class State:
    """A node of the search: an artifact, in an environment, under a hypothesis."""

    candidate: Candidate
    environment: str
    hypothesis: str  # the route's hypotheses from the root, " > "-joined
    depth: int = 0
    parent: str = ""  # parent state's key ("" for the root)

    @property
    def key(self) -> str:
        return digest(json.dumps([self.candidate.digest, self.environment, self.hypothesis]))


@dataclass(frozen=True)
class SearchLimits:
    max_expansions: int = 8
    max_stalled: int = 2
    max_depth: int = 3
    max_children: int = 3  # the engine keeps only the first children a generation returns

    def __post_init__(self) -> None:
        for name in ("max_expansions", "max_stalled", "max_depth", "max_children"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise SearchError(f"SearchLimits.{name} must be an int >= 1, got {v!r}")


@dataclass(frozen=True)
class Costs:
    """Declared cost units per action (a teaching price list, not an API's price)."""

    generate: float
    execute: float
    verify: float
    confirm: float

    @classmethod
    def of(cls, table: Mapping[str, float]) -> Costs:
        try:
            costs = cls(*(float(table[k]) for k in ("generate", "execute", "verify", "confirm")))
        except KeyError as exc:
            raise SearchError(f"cost table lacks {exc.args[0]!r}: {dict(table)}") from None
        if any(c < 0 for c in costs.as_dict().values()):
            raise SearchError(f"costs must be >= 0, got {costs}")
        return costs

    def as_dict(self) -> dict[str, float]:
        return {"generate": self.generate, "execute": self.execute, "verify": self.verify, "confirm": self.confirm}


@dataclass(frozen=True, kw_only=True)
class Sealed:
    """A candidate that passed every required dev check. Nothing about it can change."""

    order: int  # 0 for the first candidate sealed in this search
    state: State
    route: str
    evidence: str  # digest of the Evidence that verified it
    suite: str
    validator: str

    @property
    def candidate(self) -> Candidate:
        return self.state.candidate

    @property
    def digest(self) -> str:
        return digest(json.dumps([self.candidate.digest, self.evidence, self.suite, self.validator]))

    def covers(self, candidate: Candidate) -> bool:
        """True only for the very candidate sealed: a changed one inherits no verdict."""
        return candidate.digest == self.candidate.digest


@dataclass(frozen=True)
class WinnerRule:
    """How the winner is picked among sealed candidates; registered before any is seen."""

    name: str
    key: Callable[[Sealed, Candidate], Any]  # (sealed, start) -> sort key, smallest wins
    description: str = ""


def _changed_lines(sealed: Sealed, start: Candidate) -> tuple[int, int]:
    a, b = dict(start.files), dict(sealed.candidate.files)
    lines = 0
    for path in set(a) | set(b):
        old, new = a.get(path, "").splitlines(), b.get(path, "").splitlines()
        lines += len(set(old) ^ set(new))
    return lines, sealed.order


smallest_change = WinnerRule(
    "smallest change, then earliest sealed",
    _changed_lines,
    "fewest lines differing from the start (changed risk and scope), ties to the first sealed",
)


@dataclass(frozen=True, kw_only=True)
class Branch:
    """One child of one expansion, as the search recorded it."""

    expansion: int
    name: str
    parent: str  # parent state key
    state: str  # child state key ("" if it never executed)
    depth: int
    candidate: str  # candidate digest ("" if it never executed)
    outcome: str  # sealed | frontier | not expanded | execute failed | not run | quarantined
    reason: str
    spent: float  # cost units charged to this branch (execute + verify)
    progress: Mapping[str, Any] = field(default_factory=dict)  # Progress.as_dict()
    error_class: str = ""
    resolved: bool = False


@dataclass(frozen=True, kw_only=True)
class Expansion:
    index: int  # 1-based
    state: str
    hypothesis: str
    depth: int
    proposed: int  # children the generator returned
    kept: int  # after the engine kept the first max_children
    generate_spent: float
    failure: str = ""


@dataclass(frozen=True, kw_only=True)
class SearchResult:
    """How a search ended. `success` needs a sealed winner AND a passed confirmation."""

    run_id: str
    status: Literal["success", "incomplete"]
    reason: str
    rule: str
    winner: Sealed | None
    confirmed: bool | None  # None: confirmation never ran
    sealed: tuple[Sealed, ...]
    expansions: tuple[Expansion, ...]
    branches: tuple[Branch, ...]
    baseline: Verdict
    baseline_run: CheckRun

    @property
    def success(self) -> bool:
        return self.status == "success"

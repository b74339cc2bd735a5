"""What stop rules read: per-round counts, the steps of a run and its verifications.

A `History` is rebuilt by the runner after every round (counts from the ledger, steps and
verifications as they happened); `labkit.loop.engine.stopping`'s rules read it and nothing else.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType

from labkit.core.types import Evidence, Outcome, digest
from labkit.grading.verdicts import signature

__all__ = ["History", "RoundStats", "Step", "Verification", "failure_keys"]


@dataclass(frozen=True, kw_only=True)
class RoundStats:
    """One round's counts: what a stop rule needs, without the intervals."""

    round: int
    fixed: int
    broken: int
    wrong_before: int
    right_before: int
    cost: float = 0.0
    seconds: float = 0.0
    risk: float = 0.0

    @property
    def net(self) -> int:
        return self.fixed - self.broken

    @property
    def fix_rate(self) -> float:
        """Fixed as a share of the cases that were wrong going into the round."""
        return self.fixed / self.wrong_before if self.wrong_before else 0.0

    @property
    def break_rate(self) -> float:
        """Broken as a share of the cases that were right going into the round."""
        return self.broken / self.right_before if self.right_before else 0.0


@dataclass(frozen=True, kw_only=True)
class Step:
    """One case after one round, as the loop saw it: the candidate state and its test outcomes."""

    case: str
    round: int
    state: str  # candidate digest
    outcomes: Mapping[str, Outcome] = field(default_factory=dict)
    failures: frozenset[str] = frozenset()  # failure-evidence keys (see `failure_keys`)
    kept: bool = True  # False for a proposal that was validated and rolled back

    def __post_init__(self) -> None:
        object.__setattr__(self, "outcomes", MappingProxyType(dict(self.outcomes)))

    @classmethod
    def of(cls, case: str, round: int, evidence: Evidence, kept: bool = True) -> Step:
        outcomes = {r.nodeid: r.outcome for r in evidence.results}
        return cls(
            case=case,
            round=round,
            state=evidence.candidate,
            outcomes=outcomes,
            failures=failure_keys(evidence),
            kept=kept,
        )


def failure_keys(evidence: Evidence) -> frozenset[str]:
    """One key per failing test: digest of (suite, test, outcome, message).

    The same failure seen again on a new candidate has the same key; a new failing test,
    or the same test failing with a different message, is new evidence.
    """
    return frozenset(digest(f"{evidence.suite}\0{r.nodeid}\0{r.outcome}\0{r.message}") for r in evidence.failures)


@dataclass(frozen=True)
class Verification:
    """One validation run reduced to keys: who judged which candidate under which suite, and how."""

    candidate: str
    suite: str
    validator: str
    signature: str  # digest of the sorted (test, outcome) pairs
    case: str = ""

    @classmethod
    def of(cls, evidence: Evidence, case: str = "") -> Verification:
        return cls(evidence.candidate, evidence.suite, evidence.validator, signature(evidence), case)


@dataclass(frozen=True)
class History:
    """What the loop knows after some rounds: per-round counts, per-case steps, every validation."""

    rounds: tuple[RoundStats, ...] = ()
    steps: tuple[Step, ...] = ()
    verifications: tuple[Verification, ...] = ()

    def for_case(self, case: str) -> History:
        """The same history restricted to one case's steps and verifications (rounds kept)."""
        steps, verifications = self._by_case.get(case, ([], []))
        return History(self.rounds, tuple(steps), tuple(verifications))

    @cached_property
    def _by_case(self) -> dict[str, tuple[list[Step], list[Verification]]]:
        """Steps and verifications by case, built once: a run asks for every case's history each round."""
        out: dict[str, tuple[list[Step], list[Verification]]] = defaultdict(lambda: ([], []))
        for s in self.steps:
            out[s.case][0].append(s)
        for v in self.verifications:
            out[v.case][1].append(v)
        return dict(out)

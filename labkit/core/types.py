"""The nouns of the reflection loop: candidate, evidence, hypothesis, patch, verdict, decision.

Everything here is a frozen dataclass: a round's record can be shared, hashed and
stepped through without anyone mutating it behind the notebook's back. Behaviour
lives in the primitives (validator, patch, ledger, budget); these are just data.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Literal


def digest(text: str | bytes) -> str:
    """Content hash used everywhere a thing is named by what it contains (sha256, 16 hex)."""
    data = text.encode() if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()[:16]


def _freeze(files: Mapping[str, str]) -> Mapping[str, str]:
    return MappingProxyType(dict(sorted(files.items())))


@dataclass(frozen=True)
class Candidate:
    """What the executor produced: a set of files (relative path -> text). No self-judgement."""

    files: Mapping[str, str]
    label: str = ""
    parent: str | None = None  # digest of the candidate this one was patched from

    def __post_init__(self) -> None:
        object.__setattr__(self, "files", _freeze(self.files))

    @property
    def digest(self) -> str:
        return digest(json.dumps(dict(self.files), sort_keys=True))

    def with_files(self, files: Mapping[str, str], label: str = "") -> Candidate:
        return Candidate(files=files, label=label or self.label, parent=self.digest)


Outcome = Literal["passed", "failed", "error", "skipped", "missing"]


@dataclass(frozen=True)
class TestResult:
    """One test's outcome as read from the machine-readable report (never from stdout)."""

    __test__ = False  # not a pytest class

    nodeid: str
    outcome: Outcome
    message: str = ""
    seconds: float = 0.0


class Bucket(StrEnum):
    """SWE-bench's four buckets: what a test was expected to be -> what it is now."""

    FAIL_TO_PASS = "FAIL_TO_PASS"
    PASS_TO_PASS = "PASS_TO_PASS"
    FAIL_TO_FAIL = "FAIL_TO_FAIL"
    PASS_TO_FAIL = "PASS_TO_FAIL"


@dataclass(frozen=True, kw_only=True)
class Evidence:
    """Reproducible, external facts about one candidate under one suite. Never a suggestion."""

    candidate: str  # candidate digest
    suite: str  # acceptance-suite digest
    validator: str  # validator identity (its settings' digest)
    results: tuple[TestResult, ...]
    exit_code: int | None  # None when the run was killed (timeout, memory)
    wall_seconds: float
    alarms: tuple[str, ...] = ()  # integrity alarms; non-empty means quarantined
    stderr_tail: str = ""
    timed_out: bool = False
    # How the run was contained, in words: "isolated: ..." or "NOT ISOLATED: ..." (shown with it)
    isolation: str = ""
    # Required tests no independent runner confirmed (labkit decides which it can run, from the
    # pristine test text; every one of them in the process sandbox, which has no cross-check)
    unchecked: tuple[str, ...] = ()

    @property
    def isolated(self) -> bool:
        return self.isolation.startswith("isolated")

    @property
    def digest(self) -> str:
        payload = [
            self.candidate,
            self.suite,
            self.validator,
            [(r.nodeid, r.outcome) for r in self.results],
            self.alarms,
        ]
        return digest(json.dumps(payload))

    def outcome(self, nodeid: str) -> Outcome:
        for r in self.results:
            if r.nodeid == nodeid:
                return r.outcome
        return "missing"

    @property
    def failures(self) -> tuple[TestResult, ...]:
        return tuple(r for r in self.results if r.outcome != "passed")


@dataclass(frozen=True)
class Verdict:
    """Evidence sorted into SWE-bench buckets for one acceptance suite.

    `groups` maps each bucket to ``{"success": [...], "failure": [...]}``, as in SWE-bench's
    report: FAIL_TO_PASS successes are fixed tests, PASS_TO_PASS failures are breakages.
    """

    evidence: Evidence
    fail_to_pass: tuple[str, ...]  # expected-to-be-fixed tests that pass now
    fail_to_fail: tuple[str, ...]  # expected-to-be-fixed tests still failing
    pass_to_pass: tuple[str, ...]  # protective tests still passing
    pass_to_fail: tuple[str, ...]  # protective tests now failing

    @property
    def quarantined(self) -> bool:
        return bool(self.evidence.alarms)

    @property
    def resolved(self) -> bool:
        """All failing acceptance passes and every protective test still passes, with no alarm."""
        return not self.quarantined and not self.fail_to_fail and not self.pass_to_fail

    @property
    def cross_checked(self) -> bool:
        """Every required test's outcome was confirmed by the independent runner."""
        return not self.evidence.unchecked

    @property
    def status(self) -> str:
        """In words: quarantined, resolved, resolved (not cross-checked) or unresolved."""
        if self.quarantined:
            return "quarantined"
        if self.resolved:
            return "resolved" if self.cross_checked else "resolved (not cross-checked)"
        return "unresolved"

    def score(self, bucket: Literal["acceptance", "protective"]) -> tuple[int, int]:
        """(passed, total) for the failing acceptance or the protective tests."""
        if bucket == "acceptance":
            return len(self.fail_to_pass), len(self.fail_to_pass) + len(self.fail_to_fail)
        return len(self.pass_to_pass), len(self.pass_to_pass) + len(self.pass_to_fail)

    def report(self) -> dict[str, dict[str, list[str]]]:
        return {
            "FAIL_TO_PASS": {
                "success": list(self.fail_to_pass),
                "failure": list(self.fail_to_fail),
            },
            "PASS_TO_PASS": {
                "success": list(self.pass_to_pass),
                "failure": list(self.pass_to_fail),
            },
        }


@dataclass(frozen=True)
class Hypothesis:
    """One falsifiable cause: what is wrong, and which observation would refute it."""

    cause: str
    refuted_if: str
    evidence_ref: str = ""  # digest of the Evidence it explains


@dataclass(frozen=True)
class PatchSize:
    files: int
    hunks: int
    added: int
    removed: int

    @property
    def lines(self) -> int:
        return self.added + self.removed


@dataclass(frozen=True)
class Patch:
    """A unified diff against a candidate. Apply and revert live in `labkit.core.patch`."""

    diff: str
    description: str = ""

    @property
    def digest(self) -> str:
        return digest(self.diff)


class Decision(StrEnum):
    KEEP = "keep"
    ROLL_BACK = "roll back"
    INVESTIGATE = "keep investigating"
    STOP = "stop"


@dataclass(frozen=True)
class DecisionRecord:
    """A decision with the reason it was taken (and which rule fired, if any)."""

    decision: Decision
    reason: str
    rule: str = ""


@dataclass(frozen=True)
class Usage:
    """Consumption over every budget dimension. Adds and compares component-wise."""

    tokens: int = 0
    calls: int = 0
    wall_seconds: float = 0.0
    cost_units: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.tokens + other.tokens,
            self.calls + other.calls,
            self.wall_seconds + other.wall_seconds,
            self.cost_units + other.cost_units,
        )

    def __sub__(self, other: Usage) -> Usage:
        return Usage(
            self.tokens - other.tokens,
            self.calls - other.calls,
            self.wall_seconds - other.wall_seconds,
            self.cost_units - other.cost_units,
        )

    def fits_in(self, other: Usage) -> bool:
        """True if every dimension of self is <= the same dimension of other."""
        return (
            self.tokens <= other.tokens
            and self.calls <= other.calls
            and self.wall_seconds <= other.wall_seconds + 1e-9
            and self.cost_units <= other.cost_units + 1e-9
        )

    def as_dict(self) -> dict[str, float]:
        return {
            "tokens": self.tokens,
            "calls": self.calls,
            "wall_seconds": self.wall_seconds,
            "cost_units": self.cost_units,
        }


@dataclass(frozen=True, kw_only=True)
class Reply:
    """What a model returned, with its usage. `simulated` is True for scripted/replay providers."""

    text: str
    model: str
    usage: Usage = field(default_factory=Usage)
    simulated: bool = False
    cached: bool = False
    logprobs: Mapping[str, float] | None = None  # top next-token log-probabilities, if asked

"""Ending a task (seed 002 §8): an experience candidate, findings, and the exposure label.

When a task ends it may *propose* experience; the write gate (`store.ExperienceStore`) decides
later. A proposal (`ExperienceCandidate`) carries the original task, the evidence (ledger event
numbers and digests), the applicability conditions, counterexamples (routes that failed, with
why), an exposure label and the attribution uncertainty (what else could explain the result).

- A candidate whose diagnostics came from a sealed final set can never become a skill or an
  example: `promote` raises MemoryRefused.
- If the owner explicitly authorises those diagnostics as development material (`authorise`),
  the final set is recorded as exposed (`labkit.record.exposure`): every artifact derived from
  the candidate (`derive`) inherits the label, and the exposed final set can confirm nothing
  more (`Recorder.confirm` raises ExposedFinalSet) until the final test data is replaced.
- A task that did not succeed ends with findings (`Finding`: an observation with its evidence,
  e.g. a check that is flaky, a tool error that cannot be diagnosed), never an "always do X" rule:
  `promote` refuses a candidate built from a failure.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from labkit.core.errors import MemoryRefused
from labkit.record.exposure import record_exposure
from labkit.record.ledger import Ledger

__all__ = [
    "ArtifactKind",
    "Derived",
    "ExperienceCandidate",
    "ExposureLabel",
    "Finding",
    "authorise",
    "derive",
    "promote",
]

ArtifactKind = Literal["skill", "example", "lesson", "training sample"]


@dataclass(frozen=True)
class ExposureLabel:
    """Where the diagnostics behind an artifact came from. Inherited by everything derived."""

    origin: Literal["development", "sealed"]
    final_set: str = ""  # digest of the sealed final set the diagnostics came from (sealed only)
    authorised_by: str = ""  # set when sealed diagnostics were authorised as development material

    @property
    def text(self) -> str:
        if self.origin == "development":
            return "development diagnostics only"
        who = f", authorised as development material by {self.authorised_by}" if self.authorised_by else ""
        return f"sealed final set {self.final_set}{who}"


@dataclass(frozen=True)
class Finding:
    """What a task that did not succeed found: an observation and its evidence, not a rule."""

    observation: str
    evidence: tuple[str, ...]
    kind: str  # e.g. "unreachable within budget", "flaky check", "undiagnosable tool error"


@dataclass(frozen=True, kw_only=True)
class ExperienceCandidate:
    """A proposal to remember, made at the end of a task; the write gate decides later."""

    task: str  # the original task: case, start, environment
    outcome: str  # success | incomplete (with the stop reason)
    evidence: tuple[str, ...]  # ledger events and digests that back it
    applicability: tuple[str, ...]  # conditions under which it may apply
    counterexamples: tuple[str, ...]  # what was tried and failed here, and why
    exposure: ExposureLabel
    attribution: tuple[str, ...]  # what else could explain the outcome (uncertainty, stated)
    strategy: str = ""  # what worked (empty for a failure: then see `findings`)
    findings: tuple[Finding, ...] = ()


@dataclass(frozen=True)
class Derived:
    """An artifact made from a candidate: a skill, an example, a lesson. Carries its label."""

    kind: ArtifactKind
    text: str
    source: str  # the candidate's task
    exposure: ExposureLabel


def promote(candidate: ExperienceCandidate, kind: ArtifactKind, text: str) -> Derived:
    """Make a skill/example/lesson from `candidate`, or refuse (MemoryRefused) when:
    its diagnostics came from a sealed final set that no one authorised as development
    material, or the task did not succeed (a failure is reported as findings, not a rule)."""
    if candidate.exposure.origin == "sealed" and not candidate.exposure.authorised_by:
        raise MemoryRefused(
            f"sealed-test diagnostics can never become a skill or an example (asked for: {kind}): "
            f"{candidate.exposure.text} "
            "(authorise them as development material first, and replace the final test data)"
        )
    if not candidate.strategy:
        raise MemoryRefused(
            f"the task ended {candidate.outcome}: report its {len(candidate.findings)} finding(s) "
            f"as findings, not as an 'always do X' {kind}"
        )
    return Derived(kind, text, candidate.task, candidate.exposure)


def derive(artifact: Derived, kind: ArtifactKind, text: str) -> Derived:
    """An artifact made from another inherits its exposure label (never cleaned by derivation)."""
    return Derived(kind, text, artifact.source, artifact.exposure)


def authorise(
    candidate: ExperienceCandidate, ledger: Ledger, *, authorised_by: str, reason: str
) -> ExperienceCandidate:
    """Explicitly authorise a sealed-exposed candidate as development material. Records the
    final set as exposed in `ledger` (it can no longer confirm) and returns the relabelled
    candidate; its label still names the sealed final set it came from."""
    label = candidate.exposure
    if label.origin != "sealed":
        raise MemoryRefused("only sealed-exposed material needs authorising; this one is development material")
    relabelled = replace(label, authorised_by=authorised_by)
    record_exposure(ledger, label.final_set, authorised_by=authorised_by, reason=reason, label=relabelled.text)
    return replace(candidate, exposure=relabelled)

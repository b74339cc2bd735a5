"""The conditioned experience store: lessons written only from verified corrections, read back
only as candidate explanations whose preconditions were re-checked (SPEC §9, seed 000).

Storage is a labkit ledger (append-only SQLite, WAL, blobs by hash): each write is one
`Kind.REMEMBER` event in the store's own run, the lesson's JSON as the event's output, so a new
version of a lesson is a new event and nothing written is ever lost or edited.

Write gate (`ExperienceStore.write`):
- the lesson must point at a *verified correction*: in the named run of an engine ledger, a
  `keep` decision whose candidate was re-tested and resolved by the validator
  (`find_correction`). An unverified, rolled-back or merely proposed change is refused;
- diagnostics from sealed final tests never enter memory: the write names the tests its signals
  were read from (`signals_from`) and the sealed suite (`sealed`); a sealed test among the
  sources, or a sealed test's file or name anywhere in the lesson's text, refuses the write.

Read (`ExperienceStore.retrieve`): every stored lesson (latest version) is re-checked against the
new task's facts and environment with `Experience.applies_to`; expired and inapplicable ones are
withheld with the reason; what comes back is a `CandidateExplanation` holding a hypothesis to
test (refuted if the lesson's counterexample holds), never a fact.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from labkit.core.errors import MemoryRefused
from labkit.core.types import Hypothesis
from labkit.loop.engine.reflection import Applicability, Experience
from labkit.record import outcomes
from labkit.record.events import Kind, Role
from labkit.record.ledger import Ledger

if TYPE_CHECKING:
    from labkit.grading.acceptance import AcceptanceSuite

__all__ = [
    "CandidateExplanation",
    "Correction",
    "ExperienceStore",
    "Exposure",
    "LessonVersion",
    "Retrieval",
    "find_correction",
]

STORE_RUN = "experience-store"


class Exposure(StrEnum):
    """Where a lesson's diagnostics came from (seed 002: development diagnostics may be passed
    back; sealed final tests never enter a repair context)."""

    DEVELOPMENT = "development"
    SEALED = "sealed"


@dataclass(frozen=True, kw_only=True)
class Correction:
    """A kept, validated change found in an engine ledger: the only thing that may teach."""

    run_id: str
    case: str
    round: int
    candidate: str  # digest of the kept candidate
    cause: str  # the hypothesis the kept change tested
    simulated: bool

    @property
    def source(self) -> str:
        return f"run {self.run_id}, round {self.round}, kept candidate {self.candidate}"


def find_correction(ledger: Ledger, run_id: str, case: str = "") -> Correction:
    """The last kept change in `run_id` (for `case`, if given) whose candidate the validator
    re-tested and found resolved. MemoryRefused, naming what is missing, if there is none."""
    events = [e for e in ledger.events(run_id) if not case or e.detail.get("case") == case]
    if not events:
        raise MemoryRefused(f"no events for run {run_id!r}{f' case {case!r}' if case else ''} in {ledger.path}")
    resolved = {
        e.detail.get("candidate")
        for e in events
        if e.kind == Kind.VERIFY and e.detail.get("retest") and e.detail.get("resolved")
    }
    keeps = [d for d in outcomes.decisions(events) if d.decision == "keep"]
    if not keeps:
        raise MemoryRefused(f"run {run_id!r} kept no change: only a verified correction may be remembered")
    verified = [d for d in keeps if d.candidate in resolved]
    if not verified:
        raise MemoryRefused(
            f"run {run_id!r} kept a change that the validator never re-tested as resolved "
            "(a kept but unvalidated change does not teach)"
        )
    kept = verified[-1]
    simulated = any(bool(e.detail.get("simulated")) for e in events)
    return Correction(
        run_id=run_id, case=kept.case, round=kept.round, candidate=kept.candidate, cause=kept.cause, simulated=simulated
    )


@dataclass(frozen=True, kw_only=True)
class LessonVersion:
    """One stored version of a lesson, with its provenance and exposure label."""

    key: str
    version: int
    experience: Experience
    exposure: Exposure
    source_run: str
    source_round: int
    candidate: str
    simulated: bool
    seq: int  # the ledger event that holds it


@dataclass(frozen=True)
class CandidateExplanation:
    """A retrieved lesson whose preconditions held: an explanation to test, not a fact."""

    entry: LessonVersion
    check: Applicability
    status: str = "candidate explanation — verify before acting"

    @property
    def hypothesis(self) -> Hypothesis:
        """The lesson as a falsifiable hypothesis for the new task."""
        exp = self.entry.experience
        return Hypothesis(
            cause=f"{exp.failure_mode} (as in {exp.source})",
            refuted_if=f"the signal is absent, or: {exp.counterexample}",
            evidence_ref=f"memory:{self.entry.key}@v{self.entry.version}",
        )


@dataclass(frozen=True)
class Retrieval:
    """What a retrieval returned and what it withheld, each with the re-check's reason."""

    candidates: tuple[CandidateExplanation, ...]
    withheld: tuple[tuple[LessonVersion, Applicability], ...]


class ExperienceStore:
    """Lessons over a labkit ledger (a file path, ":memory:", or an open `Ledger`)."""

    def __init__(self, path: str | Path | Ledger = ":memory:") -> None:
        self.ledger = path if isinstance(path, Ledger) else Ledger(path)

    def write(
        self,
        experience: Experience,
        correction: Correction,
        *,
        sealed: AcceptanceSuite | Iterable[str] | None = None,
        signals_from: Iterable[str] = (),
    ) -> LessonVersion:
        """Store `experience` as verified by `correction` (see the module doc for the gate).

        `signals_from`: the test node ids the diagnostic signals were read from; `sealed`: the
        sealed final tests (a suite or node ids). The stored `source` is the correction's."""
        if not isinstance(correction, Correction):
            raise MemoryRefused("a lesson needs a Correction from find_correction (a kept, validated change)")
        leaks = _sealed_leaks(experience, sealed, tuple(signals_from))
        if leaks:
            raise MemoryRefused("diagnostics from sealed final tests may never be written: " + "; ".join(leaks))
        exp = replace(experience, source=correction.source)
        key = exp.lesson
        version = 1 + max((e.version for e in self._all() if e.key == key), default=0)
        event = self.ledger.record(
            STORE_RUN,
            version,
            Role.MEMORY,
            Kind.REMEMBER,
            outputs=json.dumps(exp.as_dict(), sort_keys=True),
            detail={
                "key": key,
                "version": version,
                "exposure": Exposure.DEVELOPMENT.value,
                "source_run": correction.run_id,
                "source_round": correction.round,
                "candidate": correction.candidate,
                "simulated": correction.simulated,
            },
        )
        return _entry(self.ledger, event.seq, event.output_hash, dict(event.detail))

    def entries(self) -> list[LessonVersion]:
        """The latest version of every lesson, in writing order."""
        latest: dict[str, LessonVersion] = {}
        for e in self._all():
            latest[e.key] = e
        return sorted(latest.values(), key=lambda e: e.seq)

    def retrieve(self, facts: Mapping[str, bool], *, environment: str, today: dt.date | None = None) -> Retrieval:
        """Re-check every lesson against the task's facts and environment; return the ones whose
        preconditions hold as candidate explanations, and the rest withheld with the reason."""
        got: list[CandidateExplanation] = []
        withheld: list[tuple[LessonVersion, Applicability]] = []
        for entry in self.entries():
            check = entry.experience.applies_to(facts, environment=environment, today=today)
            if check.ok:
                got.append(CandidateExplanation(entry, check))
            else:
                withheld.append((entry, check))
        return Retrieval(tuple(got), tuple(withheld))

    def _all(self) -> list[LessonVersion]:
        return [
            _entry(self.ledger, e.seq, e.output_hash, dict(e.detail))
            for e in self.ledger.events(STORE_RUN)
            if e.kind == Kind.REMEMBER
        ]

    def close(self) -> None:
        self.ledger.close()


def _entry(ledger: Ledger, seq: int, output_hash: str, d: dict[str, object]) -> LessonVersion:
    exp = Experience.from_mapping(json.loads(ledger.get(output_hash)))
    return LessonVersion(
        key=str(d["key"]),
        version=int(str(d["version"])),
        experience=exp,
        exposure=Exposure(str(d["exposure"])),
        source_run=str(d["source_run"]),
        source_round=int(str(d["source_round"])),
        candidate=str(d["candidate"]),
        simulated=bool(d["simulated"]),
        seq=seq,
    )


def _sealed_names(sealed: AcceptanceSuite | Iterable[str] | None) -> set[str]:
    if sealed is None:
        return set()
    ids = (
        set(sealed) if not hasattr(sealed, "tests") else {*sealed.tests, *sealed.fail_to_pass, *sealed.pass_to_pass}  # type: ignore[union-attr]
    )
    names = set(ids)
    for i in ids:
        path, _, test = i.partition("::")
        names |= {path.rsplit("/", 1)[-1], test.split("[")[0]} - {""}
    return names


def _sealed_leaks(
    exp: Experience, sealed: AcceptanceSuite | Iterable[str] | None, sources: tuple[str, ...]
) -> list[str]:
    names = _sealed_names(sealed)
    if not names:
        return []
    ids = {n for n in names if "::" in n} | {n for n in names if n.endswith(".py")}
    leaks = [f"signal read from sealed test {s}" for s in sources if s in names or s.split("::")[0] in ids]
    text = json.dumps(exp.as_dict())
    leaks += [f"lesson text names sealed test {n!r}" for n in sorted(names) if n in text]
    return leaks

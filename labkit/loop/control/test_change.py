"""Changing a protected test legitimately (seed 000): evidence, a separate path, re-validation.

Acceptance is protected — the validator overwrites whatever a candidate does to a test — but
a test can itself encode a wrong requirement. It may then be changed only like this:

1. the change names **independent requirement evidence**: a `Requirement` record whose author
   is neither the change's proposer nor the author of any candidate scored under the old
   suite, and which says it concerns the test being changed;
2. it goes through this separate, recorded path: one `Kind.TEST_CHANGE` event carrying the
   evidence, the old and new test digests and the old and new suite digests;
3. **every candidate scored under the old suite** (read from the ledger's VERIFY events with
   the old digest) is re-validated under the new one, and the re-run is recorded.

Without that evidence — none, self-written, or about another test — the change is refused
(`TestChangeRefused`), the refusal is recorded too, and the suite stays as it was.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from labkit.core.errors import TestChangeRefused
from labkit.core.types import Candidate, digest
from labkit.grading.acceptance import AcceptanceSuite
from labkit.record.events import Kind, Role

if TYPE_CHECKING:
    from labkit.grading.verdicts import Checker
    from labkit.record.ledger import Ledger

__all__ = ["ChangeOutcome", "Requirement", "Revalidated", "TestChange", "TestChangeRefused", "change_test"]


@dataclass(frozen=True)
class Requirement:
    """A requirement record: who wrote it, where it comes from, what it says, which tests it concerns."""

    id: str
    author: str
    source: str
    text: str
    concerns: tuple[str, ...] = ()


@dataclass(frozen=True)
class TestChange:
    """A proposed new text for one protected test file; `replaces` maps old required node ids to new."""

    __test__ = False  # not a pytest test class

    path: str
    new_text: str
    proposed_by: str
    replaces: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Revalidated:
    candidate: str  # digest
    label: str
    old_resolved: bool
    new_resolved: bool


@dataclass(frozen=True)
class ChangeOutcome:
    old: AcceptanceSuite
    new: AcceptanceSuite
    requirement: Requirement
    revalidated: tuple[Revalidated, ...]
    seq: int  # the TEST_CHANGE event


def _new_suite(suite: AcceptanceSuite, change: TestChange) -> AcceptanceSuite:
    if change.path not in suite.tests:
        raise TestChangeRefused(f"{change.path!r} is not a protected test of {suite.name!r}: {list(suite.tests)}")

    def swap(ids: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(change.replaces.get(i, i) for i in ids)

    groups = {g: swap(ids) for g, ids in suite.groups.items()}
    return AcceptanceSuite(
        name=suite.name,
        tests={**suite.tests, change.path: change.new_text},
        fail_to_pass=swap(suite.fail_to_pass),
        pass_to_pass=swap(suite.pass_to_pass),
        groups=groups,
    )


def _scored(ledger: Ledger, suite_digest: str) -> dict[str, tuple[str, bool]]:
    """candidate digest -> (label, resolved) for every VERIFY under `suite_digest` (last one wins)."""
    out: dict[str, tuple[str, bool]] = {}
    for e in ledger.events():
        if e.kind == Kind.VERIFY and e.detail.get("suite") == suite_digest and "candidate" in e.detail:
            out[str(e.detail["candidate"])] = (str(e.detail.get("label", "")), bool(e.detail.get("resolved")))
    return out


def _authors(ledger: Ledger, candidates: set[str]) -> set[str]:
    """Who produced those candidates: the source of their GENERATE events, and the strategy of their runs."""
    runs, out = set(), set()
    for e in ledger.events():
        if e.kind == Kind.GENERATE and e.detail.get("candidate") in candidates:
            runs.add(e.run_id)
            if e.detail.get("source"):
                out.add(str(e.detail["source"]))
    for e in ledger.events():
        if e.run_id in runs and e.kind in (Kind.DEFINE, Kind.START) and e.detail.get("strategy"):
            out.add(str(e.detail["strategy"]))
    return out


def change_test(
    suite: AcceptanceSuite,
    change: TestChange,
    requirement: Requirement | None,
    *,
    pool: Mapping[str, Candidate],
    checker: Checker,
    ledger: Ledger,
    run_id: str,
) -> ChangeOutcome:
    """Change one protected test on independent evidence, or refuse (recorded either way).

    `pool` holds the candidates by digest, so that each one scored under the old suite can be
    re-validated; a scored candidate missing from it is a refusal (it could not be re-checked).
    """
    new = _new_suite(suite, change)
    scored = _scored(ledger, suite.digest)
    authors = _authors(ledger, set(scored)) | {change.proposed_by}
    base = {"path": change.path, "proposed_by": change.proposed_by, "old_suite": suite.digest,
            "new_suite": new.digest, "old_test": digest(suite.tests[change.path]),
            "new_test": digest(change.new_text), "requirement": asdict(requirement) if requirement else {}}  # fmt: skip
    concerned = {i for i in suite.required if i.startswith(change.path + "::")}
    why = ""
    if requirement is None:
        why = "no requirement evidence: a protected test changes only on a requirement record"
    elif requirement.author in authors:
        why = f"the requirement record {requirement.id} was written by {requirement.author!r}, an author of the candidates or the change"
    elif not concerned & set(requirement.concerns):
        why = f"the requirement record {requirement.id} does not concern any test in {change.path}"
    elif missing := sorted(set(scored) - set(pool)):
        why = f"{len(missing)} candidate(s) scored under the old suite cannot be re-validated: {missing}"
    if why:
        ledger.record(run_id, 0, Role.CONTROL, Kind.TEST_CHANGE, detail={**base, "accepted": False, "why": why})
        raise TestChangeRefused(f"test change to {change.path} refused: {why}")
    assert requirement is not None
    rows = []
    for cand, (label, old_ok) in scored.items():
        verdict = checker.check(pool[cand], new).verdict
        rows.append(Revalidated(cand, label, old_ok, bool(verdict.resolved)))
        ledger.record(
            run_id,
            0,
            Role.VALIDATOR,
            Kind.VERIFY,
            detail={
                "suite": new.digest,
                "candidate": cand,
                "label": label,
                "resolved": bool(verdict.resolved),
                "retest": True,
                "why": f"re-validated after test change {requirement.id}",
            },
        )
    event = ledger.record(
        run_id,
        0,
        Role.CONTROL,
        Kind.TEST_CHANGE,
        detail={**base, "accepted": True, "why": "", "revalidated": [asdict(r) for r in rows]},
    )
    return ChangeOutcome(suite, new, requirement, tuple(rows), event.seq)

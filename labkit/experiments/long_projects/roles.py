"""The roles of a long project: planner, developer, QA — and what each may read.

Every role reads only `role_view(ledger, run_id)`: the run's events minus the scorer's (the
hidden benchmark's scores, test names and results never enter it). The developer is a labkit
`Strategy` (the engine's step 3 asks it, pays it and records it); this one is *simulated*: for
each work item it writes one of the project's recorded variants, drawn with stated parameters.
QA writes its checks once, from the requirements, then checks frozen snapshots by digest.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from labkit.core.errors import DigestMismatch, InvalidSetting
from labkit.core.types import Candidate, Usage
from labkit.experiments.long_projects.items import Item
from labkit.experiments.long_projects.project import Project, QaCheck
from labkit.loop.engine.strategy import Child, Proposal, Situation
from labkit.record.events import Kind, Role

if TYPE_CHECKING:
    from labkit.record.ledger import Event, Ledger

__all__ = [
    "Developer", "DeveloperParams", "Prices", "QaParams", "Snapshots", "SimulatedDeveloper", "Work", "dev_failures",
    "role_view", "write_checks",
]  # fmt: skip

QA_SOURCES = ("same-source", "independent")


@dataclass(frozen=True)
class DeveloperParams:
    """The simulated developer (stated parameters, labelled *simulated* wherever shown).

    For each work item it writes the `slip` variant with probability `p_slip`; else, when the
    requirement's `blind` variant misses a kind of case in `blind_spots`, that variant with
    probability `p_blind` — unless the item's evidence holds a failing QA check of that very
    kind (evidence it did not have: then it writes `good`); else `good`. Draws are seeded by
    (seed, requirement, attempt), so two policies meet the same luck on the same attempt."""

    p_slip: float = 0.3
    p_blind: float = 0.7
    blind_spots: tuple[str, ...] = ("boundary", "rounding")


@dataclass(frozen=True)
class QaParams:
    """How QA writes its checks from the requirements (stated parameters, *simulated*).

    Every check is left out with probability `p_miss` (either source). A same-source QA (the
    developer's own model) also leaves out a check of a kind in the developer's blind spots with
    probability `correlation`: 0 is a QA as independent as another model, 1 shares the blind
    spot fully. An independent QA (tests written from the requirements) has no such term."""

    source: str = "independent"
    correlation: float = 0.9
    p_miss: float = 0.1

    def __post_init__(self) -> None:
        if self.source not in QA_SOURCES:
            raise InvalidSetting(f"QA source must be one of {QA_SOURCES}, got {self.source!r}")
        for name in ("correlation", "p_miss"):
            v = getattr(self, name)
            if not 0.0 <= v <= 1.0:
                raise InvalidSetting(f"QaParams.{name} must be in [0, 1], got {v}")


@dataclass(frozen=True)
class Prices:
    """What each role's call is charged (a teaching price list; *simulated* token counts).

    cost units = tokens / 1000 + `validation` per paid validation (the engine's price)."""

    planner_tokens: int = 600
    developer_tokens: int = 2400  # per work item (one call each)
    qa_write_tokens: int = 1500  # QA writing its checks, once per run
    qa_review_tokens: int = 900  # QA reading a frozen snapshot's diff, per review
    validation: float = 1.0

    def usage(self, tokens: int, calls: int = 1) -> Usage:
        return Usage(tokens=tokens, calls=calls, cost_units=tokens / 1000)


def role_view(ledger: Ledger, run_id: str) -> tuple[Event, ...]:
    """The events a role may read: everything of the run except the scorer's."""
    return tuple(e for e in ledger.events(run_id) if e.role != Role.SCORER and e.kind != Kind.SCORE)


def dev_failures(view: Sequence[Event], held: str) -> tuple[str, ...] | None:
    """The failing dev tests of candidate `held`, read from its last status check in the view
    (the validation of an iteration's status step, case `<project>/it<i>/status`)."""
    for e in reversed(view):
        if (
            e.kind == Kind.VERIFY
            and e.role == Role.VALIDATOR
            and e.detail.get("candidate") == held
            and str(e.detail.get("case", "")).endswith("/status")
        ):
            report = e.evidence_value
            return tuple(report["FAIL_TO_PASS"]["failure"])
    return None


@dataclass
class Snapshots:
    """Frozen candidates by digest. `get` re-checks the bytes: what QA checks is what was frozen."""

    _held: dict[str, Candidate] = field(default_factory=dict)

    def freeze(self, candidate: Candidate) -> str:
        self._held.setdefault(candidate.digest, candidate)
        return candidate.digest

    def get(self, digest: str) -> Candidate:
        c = self._held[digest]
        if c.digest != digest:
            raise DigestMismatch(f"frozen snapshot {digest} now has digest {c.digest}: its bytes changed")
        return c


@dataclass(frozen=True)
class Work:
    """What the developer is handed for one iteration (recorded as its input)."""

    iteration: int
    items: tuple[Item, ...]

    def as_json(self) -> str:
        return json.dumps(
            {
                "iteration": self.iteration,
                "items": [
                    {"id": i.id, "title": i.title, "origin": i.origin, "evidence": list(i.evidence)} for i in self.items
                ],
            },
            sort_keys=True,
        )


class Developer(Protocol):
    """What the harness needs of a developer: a Strategy it hands each iteration's `work`,
    which says afterwards which (requirement, variant) it wrote (`choices`)."""

    work: Work
    choices: tuple[tuple[str, str], ...]

    @property
    def name(self) -> str: ...

    @property
    def simulated(self) -> bool: ...

    def propose(self, situation: Situation) -> Proposal: ...


@dataclass(kw_only=True)
class SimulatedDeveloper:
    """A labkit Strategy: proposes one child that writes a variant for each item of `work`."""

    project: Project
    params: DeveloperParams
    seed: int
    prices: Prices
    work: Work = Work(0, ())
    attempts: dict[str, int] = field(default_factory=dict)
    choices: tuple[tuple[str, str], ...] = ()  # (requirement, variant) of the last proposal
    simulated: bool = True

    @property
    def name(self) -> str:
        return f"simulated developer (slip {self.params.p_slip}, blind {self.params.p_blind})"

    @property
    def upper(self) -> Usage:
        return self.prices.usage(
            self.prices.developer_tokens * max(1, len(self.work.items)),
            max(1, len(self.work.items)),
        )

    def choose(self, item: Item) -> str:
        n = self.attempts.get(item.id, 0)
        self.attempts[item.id] = n + 1
        labels = self.project.variants[item.id]
        draw = random.Random(f"{self.seed}/{item.id}/{n}")
        slip, blind = draw.random(), draw.random()
        if "slip" in labels and slip < self.params.p_slip:
            return "slip"
        kind = self.project.blind_kinds.get(item.id, "")
        # a failing check of exactly that kind is evidence the developer did not have
        shown = {c.kind for c in self.project.qa_checks if c.nodeid in item.evidence}
        if "blind" in labels and kind in self.params.blind_spots and kind not in shown and blind < self.params.p_blind:
            return "blind"
        return "good"

    def propose(self, situation: Situation) -> Proposal:
        if not self.work.items:
            return Proposal(note="no work items")
        files = dict(situation.candidate.files)
        choices = []
        for item in self.work.items:
            label = self.choose(item)
            choices.append((item.id, label))
            files.update(self.project.variants[item.id][label])
        self.choices = tuple(choices)
        note = ", ".join(f"{r}:{v}" for r, v in choices)
        target = situation.candidate.with_files(files, label=note)
        usage = self.prices.usage(self.prices.developer_tokens * len(choices), len(choices))
        return Proposal(children=(Child(target=target, name=note, source="developer"),), usage=usage, note=note)


def write_checks(project: Project, qa: QaParams, developer: DeveloperParams, seed: int) -> tuple[QaCheck, ...]:
    """The checks QA writes from the requirements (once per run), by the stated parameters."""
    draw = random.Random(f"{seed}/qa")
    kept = []
    for check in project.qa_checks:
        miss, shared = (
            draw.random(),
            draw.random(),
        )  # both drawn for every check: sources share luck
        if miss < qa.p_miss:
            continue
        if qa.source == "same-source" and check.kind in developer.blind_spots and shared < qa.correlation:
            continue
        kept.append(check)
    return tuple(kept)

"""A long project's work items: added, closed, reopened, open — each change counted once.

An item is one requirement's open problem. Filing a finding on a requirement that has no item
adds one; on a closed item it reopens that item (counted as reopened, never as new); on an
open item it only adds evidence. Progress per iteration is read from the changes recorded here.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

__all__ = ["Change", "Item", "Tally", "WorkItems"]

Origin = Literal["dev", "qa"]
ChangeKind = Literal["added", "closed", "reopened"]


@dataclass(frozen=True, kw_only=True)
class Item:
    id: str  # the requirement id
    title: str
    open: bool
    origin: Origin  # who opened it last: the dev tests' evidence, or a QA finding
    evidence: tuple[str, ...]  # visible failing test ids (dev or QA), never hidden ones
    opened: int  # the iteration it was last opened in
    reopened: int = 0  # how many times it was reopened
    worked: bool = False  # a kept change targeted it since it was last opened


@dataclass(frozen=True)
class Change:
    iteration: int
    item: str
    kind: ChangeKind
    by: str  # "planner", "qa"


@dataclass(frozen=True)
class Tally:
    iteration: int
    added: int
    closed: int
    reopened: int
    open: int


@dataclass
class WorkItems:
    items: dict[str, Item] = field(default_factory=dict)
    changes: list[Change] = field(default_factory=list)

    def file(
        self,
        rid: str,
        title: str,
        origin: Origin,
        evidence: tuple[str, ...],
        iteration: int,
        by: str,
    ) -> str:
        """File a finding on requirement `rid`; returns "added", "reopened" or "" (already open)."""
        item = self.items.get(rid)
        if item is None:
            self.items[rid] = Item(id=rid, title=title, open=True, origin=origin, evidence=evidence, opened=iteration)
            self.changes.append(Change(iteration, rid, "added", by))
            return "added"
        if not item.open:
            self.items[rid] = replace(
                item,
                open=True,
                origin=origin,
                evidence=evidence,
                opened=iteration,
                reopened=item.reopened + 1,
                worked=False,
            )
            self.changes.append(Change(iteration, rid, "reopened", by))
            return "reopened"
        merged = tuple(dict.fromkeys(item.evidence + evidence))
        self.items[rid] = replace(item, evidence=merged, origin="qa" if origin == "qa" else item.origin)
        return ""

    def worked_on(self, rid: str) -> None:
        self.items[rid] = replace(self.items[rid], worked=True)

    def close(self, rid: str, iteration: int, by: str) -> bool:
        item = self.items.get(rid)
        if item is None or not item.open:
            return False
        self.items[rid] = replace(item, open=False)
        self.changes.append(Change(iteration, rid, "closed", by))
        return True

    def open_items(self) -> list[Item]:
        return sorted((i for i in self.items.values() if i.open), key=lambda i: i.id)

    def tally(self, iteration: int) -> Tally:
        here = [c.kind for c in self.changes if c.iteration == iteration]
        return Tally(
            iteration,
            here.count("added"),
            here.count("closed"),
            here.count("reopened"),
            len(self.open_items()),
        )

"""The selector cascade's hard tier (seed 002 §2) as a configuration of the engine.

`Offered` is a frontier strategy: one expansion of the start whose children are the offered
changes that byte-compile (tier 1: compile, nothing executed). The engine validates each child
on the protected tests (tier 2, paid through the run's budget) and decides it with
keep="resolved" and the rule's patch cap (tier 3: constraints). `hard_tier` reads one entry's
outcome back from the engine's attempt; the first failure stops it. The reviewer and the owner
(`labkit.experiments.judging.cascade`) only ever see what passed.

Compile runs in the strategy because the engine's runner has no build step yet (the search
host's `prepare(..., build=byte_compile)` is not reachable through `engine.run`): with one, a
SyntaxError would be step 4's failure instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from labkit.core import patch as patches
from labkit.core.types import Candidate, Patch

if TYPE_CHECKING:  # the engine is imported when a cascade runs, not when its recording is read
    from labkit.loop.engine.strategy import Proposal, Situation
    from labkit.loop.engine.trace import Attempt

__all__ = ["Offered", "OfferedChange", "Tiered", "hard_tier"]


@dataclass(frozen=True)
class OfferedChange:
    """A candidate change offered to the cascade, with what its author claims about it."""

    name: str
    patch: Patch
    claims: frozenset[str] = frozenset()  # e.g. {"bounds_memory"}: read by the owner only


@dataclass(frozen=True, kw_only=True)
class Tiered:
    """One candidate through the cascade: the tier it stopped at (or "winner") and why."""

    name: str
    candidate: str
    failed: str  # the hard check it failed ("" if it passed them all)
    reason: str
    lines: int
    claims: tuple[str, ...]
    reviewer: tuple[float, ...] = ()  # mean rubric score in each blinded order
    reached: str = "hard"  # hard | reviewer | owner


@dataclass
class Offered:
    """The cascade's hard tier as a frontier strategy: one expansion of the start whose children
    are the offered changes that byte-compile (tier 1, nothing executed; `compile_failures`
    keeps why the others never reached the validator). The engine validates each child (tier 2)
    and decides it with keep="resolved" and the rule's patch cap (tier 3)."""

    entries: Sequence[OfferedChange]
    compile_failures: dict[str, str] = field(default_factory=dict)  # name -> the SyntaxError
    name: str = "the changes offered to the selector cascade"
    simulated: bool = True

    def propose(self, situation: Situation) -> Proposal:
        from labkit.loop.engine.strategy import Child, Proposal
        from labkit.loop.search.search_case import byte_compile

        children = []
        for e in self.entries:
            cand = patches.apply(situation.candidate, e.patch, e.name)
            try:
                byte_compile(cand)
            except SyntaxError as exc:
                self.compile_failures[e.name] = f"SyntaxError: {exc.msg} (line {exc.lineno})"
                continue
            children.append(Child(patch=e.patch, name=e.name, source="offered"))
        return Proposal(children=tuple(children), note=f"{len(children)}/{len(self.entries)} compile")


_TOO_LARGE = "green or not, not attributable: "  # decide's reason for a child over the patch cap


def hard_tier(e: OfferedChange, start: Candidate, offered: Offered, attempts: Mapping[str, Attempt]) -> Tiered:
    """One entry's hard tiers, read from the engine's attempt: the first failure stops it."""
    cand = patches.apply(start, e.patch, e.name)
    failed, reason = "", "passed compile, tests and constraints"
    a = attempts.get(e.name)
    if e.name in offered.compile_failures:
        failed, reason = "compile", offered.compile_failures[e.name]
    elif a is None or a.retest is None:  # refused at step 4 (e.g. a protected path)
        failed, reason = (
            (a.decision.rule, a.decision.reason) if a else ("tests", "never validated: the run stopped first")
        )
    elif not a.retest.resolved:
        bad = [r.nodeid.split("::")[-1] for r in a.retest.evidence.failures]
        failed, reason = "tests", f"{a.retest.status}: " + ", ".join(bad)
    elif a.decision.rule == "patch-size":
        failed, reason = "constraints", a.decision.reason.removeprefix(_TOO_LARGE)
    lines = patches.size(e.patch).lines
    return Tiered(
        name=e.name, candidate=cand.digest, failed=failed, reason=reason, lines=lines, claims=tuple(sorted(e.claims))
    )

"""Best-of-N as a configuration of the engine: N samples from one prompt are one round's rival children.

Sampling N answers and keeping the one an external check likes best is search too (seed 002
§2). Here it is no loop of its own: `BestOfN.propose` draws N candidates in round 1 and returns
them as children of one proposal; `labkit.loop.engine.run` validates every child with the same
validator, decides each, keeps the best kept child (`decide.best`), pays and records each step.
Later rounds propose nothing (the N samples were the whole budget of ideas).

    engine.run(tasks, BestOfN(draw, n=8), validator, rounds=1, keep="resolved")
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from labkit.core.types import Candidate, Usage
from labkit.loop.engine.steps import REFLECT_UPPER
from labkit.loop.engine.strategy import Child, Proposal, Situation

__all__ = ["BestOfN", "Sample"]


@dataclass(frozen=True)
class Sample:
    """One draw: the candidate it reached (None: the reply was unusable), what it cost, the reply."""

    candidate: Candidate | None
    usage: Usage = field(default_factory=Usage)
    raw: str = ""


@dataclass(frozen=True)
class BestOfN:
    """`draw(situation, i)` is the i-th sample for the situation's case (i = 0 .. n − 1)."""

    draw: Callable[[Situation, int], Sample]
    n: int
    name: str = "best of n"
    simulated: bool = False

    @property
    def upper(self) -> Usage:
        """One proposal is n calls: what the engine reserves for it."""
        return Usage(
            tokens=REFLECT_UPPER.tokens * self.n,
            calls=self.n,
            wall_seconds=REFLECT_UPPER.wall_seconds * self.n,
            cost_units=REFLECT_UPPER.cost_units * self.n,
        )

    def propose(self, situation: Situation) -> Proposal:
        if situation.round > 1:
            return Proposal(note="the n samples were drawn in round 1")
        samples = [self.draw(situation, i) for i in range(self.n)]
        children = tuple(
            Child(target=s.candidate, name=f"sample-{i}", source="sample")
            for i, s in enumerate(samples)
            if s.candidate is not None
        )
        usage = sum((s.usage for s in samples), Usage())
        raw = "\n---\n".join(s.raw for s in samples)
        return Proposal(children=children, raw=raw, usage=usage, note=f"{len(children)}/{self.n} samples usable")
